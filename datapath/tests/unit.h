/* SPDX-License-Identifier: Apache-2.0
 *
 * unit.h - the smallest test framework that does the job: CHECK* record a
 * failure with file:line and go on; TEST() registers a function; the
 * runner prints "N passed, M failed" and exits non-zero on any failure.
 */
#ifndef E3_UNIT_H
#define E3_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
};

extern int unit_failed_checks;

#define CHECK(cond) do { \
	if (!(cond)) { \
		unit_failed_checks++; \
		fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
	} \
} while (0)

#define CHECK_EQ(a, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) { \
		unit_failed_checks++; \
		fprintf(stderr, "  FAIL %s:%d: %s == %s (%lld != %lld)\n", \
			__FILE__, __LINE__, #a, #b, _a, _b); \
	} \
} while (0)

#define CHECK_MEM(a, b, n) do { \
	if (memcmp((a), (b), (n)) != 0) { \
		unit_failed_checks++; \
		fprintf(stderr, "  FAIL %s:%d: %s and %s differ\n", __FILE__, __LINE__, #a, #b); \
		unit_hexdump("got", (a), (n)); \
		unit_hexdump("want", (b), (n)); \
	} \
} while (0)

void unit_hexdump(const char *what, const void *p, size_t n);
/* Runs the tests (after the caller's setup); returns the exit code. */
int unit_run(const struct unit_test *t, unsigned n);

#endif
