/* termsafe unit test: what reaches a terminal, byte by byte. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/termsafe.h"
#include "tests/unit/tap.h"

static char *
esc(const char *s, size_t n, unsigned keep)
{
	struct sbuf b = { 0 };

	termsafe_add(&b, s, n, keep);
	return sbuf_steal(&b);
}

static void
check(const char *in, unsigned keep, const char *want, const char *what)
{
	char *got = esc(in, strlen(in), keep);

	is_str(got, want, "%s", what);
	free(got);
}

/* Only printable ASCII and line breaks (the input below has no printable non-ASCII). */
static int
inert(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p >= 0x7f)
			return 0;
	return 1;
}

int
main(void)
{
	char *s, *again, *cause;
	struct sbuf b = { 0 };
	char big[1000];
	unsigned i;

	check("plain text 123 ~!", TERMSAFE_FIELD, "plain text 123 ~!", "printable ASCII is kept");
	check("\x1b]0;PWNED\x07\x1b[2J", TERMSAFE_FIELD, "\\x1b]0;PWNED\\x07\\x1b[2J",
	    "ESC and BEL are shown as \\x1b \\x07");
	check("a\x7f" "b\x01", TERMSAFE_FIELD, "a\\x7fb\\x01", "DEL and other C0 controls");
	check("l1\nl2\tx\r", TERMSAFE_FIELD, "l1\\nl2\\tx\\r", "a field escapes \\n \\t \\r");
	check("l1\nl2\tx\r\n", TERMSAFE_TEXT, "l1\nl2\tx\\r\n", "text keeps \\n and \\t, never \\r");
	check("\xc2\x9b" "1m \xc2\x80", TERMSAFE_FIELD, "\\u009b1m \\u0080",
	    "C1 controls encoded in UTF-8 become \\u009b");
	check("\x9b" "1m\xff\xc3", TERMSAFE_FIELD, "\\x9b1m\\xff\\xc3",
	    "bytes that are not UTF-8 (raw C1 too) become \\xHH, one each");
	check("\xe0\x80\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xc0\xaf", TERMSAFE_FIELD,
	    "\\xe0\\x80\\xaf|\\xed\\xa0\\x80|\\xf4\\x90\\x80\\x80|\\xc0\\xaf",
	    "overlong forms, surrogates and code points above U+10FFFF are not UTF-8");
	check("abc\xe2\x80\xae" "cba\xe2\x81\xa6\xe2\x80\x8f\xe2\x80\xa8", TERMSAFE_FIELD,
	    "abc\\u202ecba\\u2066\\u200f\\u2028", "bidi controls and line separators are escaped");
	check("caf\xc3\xa9 \xe7\x9b\xae\xe6\xa0\x87 \xf0\x9f\x90\x8d e\xcc\x81 \xc2\xa0",
	    TERMSAFE_FIELD, "caf\xc3\xa9 \xe7\x9b\xae\xe6\xa0\x87 \xf0\x9f\x90\x8d e\xcc\x81 \xc2\xa0",
	    "accents, CJK, emoji, combining marks and U+00A0 stay as they are");
	check("'a\\\\b\\x1b'", TERMSAFE_FIELD, "'a\\\\b\\x1b'",
	    "backslashes are not doubled: a repr shows as Python prints it");

	s = esc("a\0b", 3, TERMSAFE_FIELD);
	is_str(s, "a\\x00b", "NUL inside a counted string");
	free(s);
	s = esc("x\xe2\x80", 3, TERMSAFE_FIELD);
	is_str(s, "x\\xe2\\x80", "a sequence cut short at the end");
	free(s);

	for (i = 0; i < 256; i++) {
		char c[2] = { (char)i, 0 };

		sbuf_addn(&b, c, 1);
		if (i > 0 && i % 16 == 0)
			sbuf_add(&b, "\xc2\x9b\xe2\x80\xae");
	}
	s = esc(b.s, b.len, TERMSAFE_KEEP_NL);
	ok(inert(s), "every byte value: only printable ASCII and line breaks remain");
	again = esc(s, strlen(s), TERMSAFE_KEEP_NL);
	is_str(again, s, "escaping escaped text changes nothing");
	free(s);
	free(again);
	sbuf_free(&b);

	termsafe_addf(&b, "%s: %d %zu %lld %llx %5.1f%% %c [%s]", "t\x1b", -3, (size_t)7,
	    -9LL, 0xabcULL, 2.25, 'q', "ok\n");
	is_str(b.s, "t\\x1b: -3 7 -9 abc   2.2% q [ok\\n]", "termsafe_addf escapes strings, formats the rest");
	sbuf_free(&b);
	termsafe_addf(&b, "%s|%s", getenv("FP_TERMSAFE_UNSET_VARIABLE"), "");
	is_str(b.s, "?|", "termsafe_addf: NULL shows as ?");
	sbuf_free(&b);

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	s = termsafe_quote(big, 200);
	ok(strlen(s) == 203 && strcmp(s + 200, "...") == 0, "termsafe_quote cuts to 200 and says so");
	free(s);
	s = termsafe_quote("short\x1b", 200);
	is_str(s, "short\\x1b", "termsafe_quote keeps what fits, escaped");
	free(s);
	s = termsafe_quote("ab\x1b", 4);
	is_str(s, "ab...", "termsafe_quote never cuts an escape in two");
	free(s);
	s = termsafe_quote("\xe7\x9b\xae\xe6\xa0\x87\xe7\x9b\xae", 2);
	is_str(s, "\xe7\x9b\xae\xe6\xa0\x87...", "termsafe_quote counts characters, not bytes");
	free(s);
	cause = NULL;
	memset(big, 'y', sizeof big - 1);
	ok(termsafe_fail(&cause, FP_EUSAGE, "unknown option '%s' (usage: %s)", big, "x\x1b") ==
	    FP_EUSAGE, "termsafe_fail returns its status");
	ok(cause != NULL && strstr(cause, "yyy...' (usage: x\\x1b)") != NULL && strlen(cause) < 260,
	    "termsafe_fail quotes every string cut and escaped");
	free(cause);
	return done_testing();
}
