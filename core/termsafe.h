/*
 * termsafe — the one rule for untrusted text on its way to a terminal.
 *
 * Everything that comes from the target (reprs, strings, file and function
 * names, thread names, exception text, console output, its command line)
 * and every error message that quotes it passes through here before it
 * reaches a terminal, in --cmd, line mode and the TUI alike.  A terminal
 * acts on control characters: ESC starts sequences that retitle the
 * window, clear the screen, move the cursor, or worse on some emulators.
 * So this module shows them instead, visibly and in Python's notation:
 *
 *   C0 controls and DEL          \x1b  \x07  \x00  \x7f  (\r, and \n \t
 *                                      where the caller does not keep them)
 *   C1 controls U+0080–U+009F    \u009b      (encoded in UTF-8: some
 *                                             terminals read them as CSI)
 *   bytes that are not UTF-8     \x9b  \xff  (one per byte: raw C1 bytes too)
 *   bidi controls (U+061C,       \u202e      they reorder what is shown
 *   U+200E/F, U+202A–E,                      ("Trojan Source"): the screen
 *   U+2066–9), U+2028/U+2029                 would lie about the text
 *
 * Printable UTF-8 (accents, CJK, emoji, combining marks) passes as it is.
 * The backslash is not escaped: the agent's reprs already escape their
 * own, and doubling them would show `'a\\\\b'` for Python's `'a\\b'`; the
 * price is that a name holding the four characters `\x1b` looks like one
 * holding ESC.  Escaped text is printable ASCII, so escaping it again
 * changes nothing: renderers escape their fields and the sinks (the
 * writers of --cmd and line-mode output, the TUI's character decoder)
 * escape everything again, which cannot double anything.
 *
 * Never returns NULL, never fails, never looks at the locale.
 */
#ifndef FP_TERMSAFE_H
#define FP_TERMSAFE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/util.h"

/* What the caller wants to keep as it is (everything else is escaped). */
enum {
	TERMSAFE_KEEP_NL = 1 << 0,	/* line breaks that are meant: console output, multi-line reprs */
	TERMSAFE_KEEP_TAB = 1 << 1,
};
/* A single-line field: a name, a path, an error message. */
#define TERMSAFE_FIELD 0
/* Text whose lines are meant: console output, a rendered dump. */
#define TERMSAFE_TEXT (TERMSAFE_KEEP_NL | TERMSAFE_KEEP_TAB)

/* Room for an escape with its NUL (termsafe_next writes at most 7; \U0010ffff fits). */
#define TERMSAFE_ESC_MAX 12

/* Characters of an error message shown at most (termsafe_error). */
#define TERMSAFE_ERROR_MAX 1000
/* Characters of a user's or the target's word quoted in a message. */
#define TERMSAFE_QUOTE_MAX 200

/*
 * The character at s (n > 0 bytes available): returns how many bytes it
 * takes (>= 1).  Either it is shown as it is (*cp is its code point, esc
 * is "") or esc holds what to show instead (*cp is then 0).
 */
size_t termsafe_next(const char *s, size_t n, unsigned keep, uint32_t *cp,
    char esc[TERMSAFE_ESC_MAX]);

/* Append n bytes of s to out, escaped. */
void termsafe_add(struct sbuf *out, const char *s, size_t n, unsigned keep);
/* Same for a NUL-terminated string (NULL appends "?"). */
void termsafe_adds(struct sbuf *out, const char *s, unsigned keep);

/*
 * sbuf_addf where every %s argument is a single-line field, escaped
 * (TERMSAFE_FIELD); the format itself is trusted.  Conversions: %s (no
 * width or precision), the integer ones with hh/h/l/ll/z/j/t, the
 * floating ones, %c, %p and %%.
 */
void termsafe_addf(struct sbuf *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * fail() (core/util) for messages that quote a user's or the target's
 * words: every %s is a single-line field cut to TERMSAFE_QUOTE_MAX
 * characters ("..." says so), so a 100 KB name is not echoed whole.
 */
int termsafe_fail(char **cause, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * A malloc'd copy of s as a single-line field, cut to at most `max`
 * characters of what is shown (an escape counts as its length) followed
 * by "..." when it was longer: for quoting a word in a message.
 */
char *termsafe_quote(const char *s, size_t max);

/* Write n bytes of s to f, escaped (the sinks: stdout of --cmd, console output). */
void termsafe_write(FILE *f, const char *s, size_t n, unsigned keep);

/*
 * The one-line error "flight_profiler: CAUSE\n" on f: escaped as a field
 * and cut to TERMSAFE_ERROR_MAX characters.
 */
void termsafe_error(FILE *f, const char *cause);

#endif
