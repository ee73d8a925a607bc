/* Placeholder until the JSON-RPC server lands; replaced by rpc.c etc. */
#include "rpc.h"
#include <unistd.h>
int e3_rpc_init(const char *path, mode_t mode) { (void)path; (void)mode; return 0; }
void e3_rpc_poll(int timeout_ms) { usleep(timeout_ms * 1000); }
void e3_rpc_fini(void) {}
int e3_telemetry_init(void) { return 0; }
int e3_rpc_load_file(const char *path, char *err) { (void)path; (void)err; return -1; }
