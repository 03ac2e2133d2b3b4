/*
 * draw — styled lines and how they reach the screen.
 *
 * A pane never writes to the screen itself: it fills a `struct tline`
 * (text plus runs of theme elements) and the framework clips it to the
 * pane's width by display columns (wide and combining characters, invalid
 * UTF-8), lays the cursor highlight and search matches over it, and draws
 * it.  That keeps panes free of curses and lets search see exactly the
 * text that is shown.  Text is drawn through core/termsafe's rule: a
 * control character, invalid byte or bidi control in a tline is drawn as
 * its escape (\x1b, \xff, \u202e), measured as such, so no pane can
 * send the target's text raw to the terminal.
 */
#ifndef FP_DRAW_H
#define FP_DRAW_H

#include <stdbool.h>
#include <stddef.h>

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include "core/util.h"
#include "tui/theme.h"

struct tspan {
	size_t off;		/* byte offset in text where this style starts */
	enum theme_elem el;
};

struct tline {
	struct sbuf text;
	struct tspan *spans;
	size_t nspans, aspans;
};

void tline_reset(struct tline *l);
void tline_free(struct tline *l);
void tline_add(struct tline *l, enum theme_elem el, const char *s);
void tline_addn(struct tline *l, enum theme_elem el, const char *s, size_t n);
void tline_addf(struct tline *l, enum theme_elem el, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*
 * A line of the target's text (source, console or command output): tabs
 * go to the next multiple of 8 columns, counted as the text is drawn.
 */
void tline_add_text(struct tline *l, enum theme_elem el, const char *s);
/*
 * A column of exactly `width` display cells: `s` truncated (with an
 * ellipsis) or padded, left- or right-aligned.
 */
void tline_col(struct tline *l, enum theme_elem el, const char *s, int width, bool right);
/* Same, keeping the end of `s` when it must be cut (paths). */
void tline_col_tail(struct tline *l, enum theme_elem el, const char *s, int width);
/*
 * The last `width` of `n` values (oldest first) as a sparkline of
 * `width` cells, right-aligned, scaled to their own range.
 */
void tline_sparkline(struct tline *l, enum theme_elem el, const double *v, size_t n, size_t width);

/* Display cells of a UTF-8 string as drawn (an escape counts its characters). */
int text_width(const char *s, size_t n);

/* Set once at start from the locale: may we draw UTF-8 box characters? */
void draw_init(bool utf8);
bool draw_utf8(void);
/* Glyphs for the frame, in UTF-8 or ASCII. */
enum glyph { G_HLINE, G_VLINE, G_TL, G_TR, G_BL, G_BR, G_CURSOR, G_ELLIPSIS, G_DOT, G__COUNT };
const char *glyph(enum glyph g);

/*
 * Draw `l` at (y, x) in `width` cells, then pad.  `base` (an element, or
 * -1) replaces every span's style: the cursor line.  Matches of `re`
 * (may be NULL) are shown as search.match.
 */
void draw_tline(int y, int x, int width, const struct tline *l, int base,
    const pcre2_code *re);
/* Plain text in one style, clipped. */
void draw_text(int y, int x, int width, enum theme_elem el, const char *s);
/* Fill cells with spaces in a style. */
void draw_fill(int y, int x, int width, enum theme_elem el);

#endif
