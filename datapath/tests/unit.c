/* SPDX-License-Identifier: Apache-2.0 */
#include "unit.h"

int unit_failed_checks;

void unit_hexdump(const char *what, const void *p, size_t n)
{
	const uint8_t *b = p;

	fprintf(stderr, "    %s:", what);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%02x", i % 16 ? " " : "\n      ", b[i]);
	fprintf(stderr, "\n");
}

int unit_run(const struct unit_test *t, unsigned n)
{
	unsigned passed = 0, failed = 0;

	for (unsigned i = 0; i < n; i++) {
		int before = unit_failed_checks;

		t[i].fn();
		if (unit_failed_checks == before) {
			passed++;
			printf("ok   %s\n", t[i].name);
		} else {
			failed++;
			printf("FAIL %s\n", t[i].name);
		}
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
