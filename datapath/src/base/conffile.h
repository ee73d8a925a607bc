/* SPDX-License-Identifier: Apache-2.0
 *
 * conffile.h - e3-vswitchd's options from a file (/etc/e3/vswitchd/NAME.conf).
 */
#ifndef E3_CONFFILE_H
#define E3_CONFFILE_H

#include <getopt.h>

#define E3_CONF_ERRLEN 256

/* If argv holds "--conf FILE" (anywhere), return in *out a new argv with
 * the file's options around the command line's, so that the command line
 * wins where both give an option:
 *   prog  <file's eal words>  <command line's EAL options>  --
 *         <file's options>  <command line's options after -->
 * The file has one "name = value" per line ("#" starts a comment): "eal"
 * takes EAL's words separated by spaces; any other name is one of longopts
 * (no dashes), and "name = yes" stands for a flag without an argument.
 * Without --conf, *out is argv itself. Returns the new argc, or -1 with err
 * naming the file's line. */
int e3_conf_argv(int argc, char **argv, const struct option *longopts, char ***out,
		 char err[E3_CONF_ERRLEN]);

#endif
