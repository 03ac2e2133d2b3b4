/*
 * linetable unit test: every configured interpreter dumps real line tables
 * and the line of each instruction as it computes it (linetable_dump.py);
 * linetable_line() must agree on every instruction.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/linetable.h"
#include "core/util.h"
#include "tests/unit/tap.h"

static size_t
unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;
	unsigned v;

	while (n < max && sscanf(s, "%2x", &v) == 1) {
		out[n++] = (uint8_t)v;
		s += 2;
	}
	return n;
}

static void
check_python(const char *version, const char *hexv, const char *exe, const char *srcdir)
{
	static uint8_t table[1 << 20];
	char *cmd, line[1 << 21];
	uint32_t vhex = (uint32_t)strtoul(hexv, NULL, 16);
	size_t len = 0, checked = 0, wrong = 0, codes = 0;
	int first = 0;
	FILE *p;

	cmd = xasprintf("'%s' '%s/tests/unit/linetable_dump.py'", exe, srcdir);
	p = popen(cmd, "r");
	free(cmd);
	if (p == NULL) {
		ok(0, "%s: run linetable_dump.py", version);
		return;
	}
	while (fgets(line, sizeof line, p) != NULL) {
		long off;
		int want, got;

		if (strncmp(line, "code ", 5) == 0) {
			char *sp = strchr(line + 5, ' ');

			first = atoi(line + 5);
			len = sp ? unhex(sp + 1, table, sizeof table) : 0;
			codes++;
		} else if (sscanf(line, "at %ld %d", &off, &want) == 2) {
			got = linetable_line(vhex, table, len, first, off);
			checked++;
			if (got != want && wrong++ < 5)
				diag("%s: offset %ld: got line %d, want %d", version, off, got, want);
		}
	}
	ok(pclose(p) == 0 && codes > 10 && checked > 100 && wrong == 0,
	    "CPython %s: %zu instructions in %zu code objects, %zu wrong", version,
	    checked, codes, wrong);
}

int
main(void)
{
	const char *list = getenv("FP_PYTHONS"), *srcdir = getenv("FP_SRCDIR");
	char line[4096];
	FILE *f;

	/* Before the first instruction means the first line, in every format. */
	ok(linetable_line(0x030800f0, (const uint8_t *)"", 0, 7, -1) == 7, "3.8 negative offset");
	ok(linetable_line(0x030c00f0, (const uint8_t *)"", 0, 9, -2) == 9, "3.12 negative offset");
	/* A corrupt table gives no line, never a crash. */
	ok(linetable_line(0x030c00f0, (const uint8_t *)"\x01\x02", 2, 9, 4) == 0, "3.12 corrupt table");
	/*
	 * A code object read torn may carry any co_firstlineno: adding the
	 * table's deltas must not overflow (UBSan fails these if it does),
	 * and a line out of range is none.
	 */
	ok(linetable_line(0x030800f0, (const uint8_t *)"\x00\x05", 2, INT_MAX, 0) == 0,
	    "3.8 torn firstlineno INT_MAX");
	ok(linetable_line(0x030800f0, (const uint8_t *)"\x00\xfb", 2, INT_MIN, 0) == 0,
	    "3.8 torn firstlineno INT_MIN");
	ok(linetable_line(0x030a00f0, (const uint8_t *)"\x02\x05", 2, INT_MAX, 0) == 0,
	    "3.10 torn firstlineno INT_MAX");
	ok(linetable_line(0x030b00f0, (const uint8_t *)"\xd8\x00", 2, INT_MAX, 0) == 0,
	    "3.11 torn firstlineno INT_MAX");
	ok(linetable_line(0x030b00f0, (const uint8_t *)"\xd8\x00", 2, 41, 0) == 42,
	    "3.11 one-line entry adds one");

	if (list == NULL || srcdir == NULL || (f = fopen(list, "r")) == NULL) {
		skip("FP_PYTHONS/FP_SRCDIR not set", "real line tables");
		return done_testing();
	}
	while (fgets(line, sizeof line, f) != NULL) {
		char ident[64], version[64], hexv[64], inc[1024], exe[1024];

		if (sscanf(line, "%63s %63s %63s %1023s %1023s", ident, version, hexv, inc, exe) == 5)
			check_python(version, hexv, exe, srcdir);
	}
	fclose(f);
	return done_testing();
}
