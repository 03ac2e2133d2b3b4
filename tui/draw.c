#include "config.h"

#include "tui/draw.h"

#include <curses.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "core/termsafe.h"

static bool utf8;

static const char *const glyphs_utf8[G__COUNT] = {
	[G_HLINE] = "\u2500", [G_VLINE] = "\u2502", [G_TL] = "\u250c", [G_TR] = "\u2510",
	[G_BL] = "\u2514", [G_BR] = "\u2518", [G_CURSOR] = "\u25b6", [G_ELLIPSIS] = "\u2026",
	[G_DOT] = "\u00b7",
};
static const char *const glyphs_ascii[G__COUNT] = {
	[G_HLINE] = "-", [G_VLINE] = "|", [G_TL] = "+", [G_TR] = "+",
	[G_BL] = "+", [G_BR] = "+", [G_CURSOR] = ">", [G_ELLIPSIS] = "~",
	[G_DOT] = "-",
};

void
draw_init(bool u)
{
	utf8 = u;
}

bool
draw_utf8(void)
{
	return utf8;
}

const char *
glyph(enum glyph g)
{
	return utf8 ? glyphs_utf8[g] : glyphs_ascii[g];
}

void
tline_reset(struct tline *l)
{
	l->text.len = 0;
	if (l->text.s != NULL)
		l->text.s[0] = '\0';
	l->nspans = 0;
}

void
tline_free(struct tline *l)
{
	sbuf_free(&l->text);
	free(l->spans);
	memset(l, 0, sizeof *l);
}

static void
style(struct tline *l, enum theme_elem el)
{
	if (l->nspans > 0 && l->spans[l->nspans - 1].el == el)
		return;
	if (l->nspans > 0 && l->spans[l->nspans - 1].off == l->text.len) {
		l->spans[l->nspans - 1].el = el;
		return;
	}
	*ARRAY_PUSH(l->spans, l->nspans, l->aspans) = (struct tspan){ l->text.len, el };
}

void
tline_addn(struct tline *l, enum theme_elem el, const char *s, size_t n)
{
	if (n == 0)
		return;
	style(l, el);
	sbuf_addn(&l->text, s, n);
}

void
tline_add(struct tline *l, enum theme_elem el, const char *s)
{
	tline_addn(l, el, s, strlen(s));
}

void
tline_addf(struct tline *l, enum theme_elem el, const char *fmt, ...)
{
	char buf[256], *p = buf;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof buf) {
		va_start(ap, fmt);
		p = xvasprintf(fmt, ap);
		va_end(ap);
	}
	tline_addn(l, el, p, (size_t)n);
	if (p != buf)
		free(p);
}

/*
 * Decode one character at s (at most n bytes): its length in bytes (>= 1),
 * the cells to draw in cells[] (*ncells of them, one column each but for
 * a wide character) and the columns they take.  All text reaches the
 * screen through here: what core/termsafe escapes is drawn as its escape
 * (\x1b, \u009b), and so is a character the locale cannot show (\u00e9
 * under LANG=C); a tab is a space.
 */
static size_t
decode(const char *s, size_t n, wchar_t cells[TERMSAFE_ESC_MAX], int *ncells, int *width)
{
	char esc[TERMSAFE_ESC_MAX];
	uint32_t cp;
	size_t len = termsafe_next(s, n, TERMSAFE_KEEP_TAB, &cp, esc);
	int w, i;

	if (esc[0] == '\0') {
		w = cp < 0x80 ? 1 : wcwidth((wchar_t)cp);
		if (w >= 0) {
			cells[0] = cp == '\t' ? L' ' : (wchar_t)cp;
			*ncells = 1;
			*width = w;
			return len;
		}
		snprintf(esc, sizeof esc, cp > 0xffff ? "\\U%08x" : "\\u%04x", (unsigned)cp);
	}
	for (i = 0; esc[i] != '\0'; i++)
		cells[i] = (wchar_t)esc[i];
	*ncells = i;
	*width = i;
	return len;
}

int
text_width(const char *s, size_t n)
{
	wchar_t cells[TERMSAFE_ESC_MAX];
	size_t i = 0;
	int total = 0, w, k;

	while (i < n && s[i] != '\0') {
		i += decode(s + i, n - i, cells, &k, &w);
		total += w;
	}
	return total;
}

/* Bytes of s that fit in `width` cells; *used gets the cells taken. */
static size_t
fit(const char *s, size_t n, int width, int *used)
{
	wchar_t cells[TERMSAFE_ESC_MAX];
	size_t i = 0, len;
	int total = 0, w, k;

	while (i < n && s[i] != '\0') {
		len = decode(s + i, n - i, cells, &k, &w);
		if (total + w > width)
			break;
		total += w;
		i += len;
	}
	*used = total;
	return i;
}

void
tline_add_text(struct tline *l, enum theme_elem el, const char *s)
{
	wchar_t cells[TERMSAFE_ESC_MAX];
	size_t i = 0, run = 0, n = strlen(s);
	int col = 0, w, k;

	while (i < n) {
		if (s[i] == '\t') {
			tline_addn(l, el, s + run, i - run);
			do
				tline_add(l, el, " ");
			while (++col % 8 != 0);
			run = ++i;
			continue;
		}
		i += decode(s + i, n - i, cells, &k, &w);
		col += w;
	}
	tline_addn(l, el, s + run, n - run);
}

static void
pad(struct tline *l, enum theme_elem el, int n)
{
	static const char spaces[] = "                                ";

	while (n > 0) {
		int k = n < (int)sizeof spaces - 1 ? n : (int)sizeof spaces - 1;

		tline_addn(l, el, spaces, (size_t)k);
		n -= k;
	}
}

void
tline_col(struct tline *l, enum theme_elem el, const char *s, int width, bool right)
{
	size_t n = strlen(s), k;
	int w = text_width(s, n), used;

	if (width <= 0)
		return;
	if (w <= width) {
		if (right)
			pad(l, el, width - w);
		tline_addn(l, el, s, n);
		if (!right)
			pad(l, el, width - w);
		return;
	}
	k = fit(s, n, width - 1, &used);
	tline_addn(l, el, s, k);
	tline_add(l, el, glyph(G_ELLIPSIS));
	pad(l, el, width - 1 - used);
}

void
tline_col_tail(struct tline *l, enum theme_elem el, const char *s, int width)
{
	size_t n = strlen(s);
	const char *p = s;

	if (width <= 0)
		return;
	if (text_width(s, n) <= width) {
		tline_col(l, el, s, width, false);
		return;
	}
	/* Drop characters from the front until the rest fits after the ellipsis. */
	while (*p != '\0' && text_width(p, strlen(p)) > width - 1) {
		p++;
		while ((*p & 0xc0) == 0x80)
			p++;
	}
	tline_add(l, el, glyph(G_ELLIPSIS));
	tline_col(l, el, p, width - 1, false);
}

/* The bars: eight heights, UTF-8 blocks or ASCII. */
void
tline_sparkline(struct tline *l, enum theme_elem el, const double *v, size_t n, size_t width)
{
	static const char *const bars[] = { "\u2581", "\u2582", "\u2583", "\u2584", "\u2585",
	    "\u2586", "\u2587", "\u2588" };
	static const char ascii[] = "_.-:=+*#";
	double lo, hi;
	size_t i, k;

	if (n > width) {
		v += n - width;
		n = width;
	}
	for (i = 0; i < width - n; i++)
		tline_add(l, EL_DEFAULT, " ");
	lo = hi = n > 0 ? v[0] : 0.0;
	for (i = 1; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	for (i = 0; i < n; i++) {
		k = hi > lo ? (size_t)((v[i] - lo) * 7.0 / (hi - lo) + 0.5) : 0;
		k = k > 7 ? 7 : k;
		if (draw_utf8())
			tline_add(l, el, bars[k]);
		else
			tline_addn(l, el, &ascii[k], 1);
	}
}

/* ---- to the screen -------------------------------------------------------- */

struct run {
	wchar_t buf[512];
	int n;
	int el;
};

static void
flush(struct run *r)
{
	if (r->n > 0) {
		attrset((attr_t)theme_attr((enum theme_elem)r->el));
		addnwstr(r->buf, r->n);
	}
	r->n = 0;
}

static void
put(struct run *r, wchar_t wc, int el)
{
	if (r->n > 0 && (el != r->el || r->n == (int)FP_NELEM(r->buf)))
		flush(r);
	r->el = el;
	r->buf[r->n++] = wc;
}

#define MAX_MATCHES 64

void
draw_tline(int y, int x, int width, const struct tline *l, int base, const pcre2_code *re)
{
	size_t ms[MAX_MATCHES], me[MAX_MATCHES], nm = 0, i = 0, span = 0, m = 0, len;
	const char *s = l->text.s ? l->text.s : "";
	size_t n = l->text.len;
	struct run r = { .n = 0, .el = EL_DEFAULT };
	wchar_t cells[TERMSAFE_ESC_MAX];
	int col = 0, w, el, k, c;

	if (width <= 0)
		return;
	if (re != NULL && n > 0) {
		pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
		size_t off = 0;

		while (nm < MAX_MATCHES && off <= n &&
		    pcre2_match(re, (PCRE2_SPTR)s, n, off, 0, md, NULL) >= 0) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);

			if (ov[1] > ov[0]) {
				ms[nm] = ov[0];
				me[nm++] = ov[1];
			}
			off = ov[1] > off ? ov[1] : off + 1;
		}
		pcre2_match_data_free(md);
	}
	move(y, x);
	while (i < n) {
		while (span + 1 < l->nspans && l->spans[span + 1].off <= i)
			span++;
		el = base >= 0 ? base : (l->nspans ? (int)l->spans[span].el : EL_DEFAULT);
		while (m < nm && me[m] <= i)
			m++;
		if (m < nm && ms[m] <= i)
			el = EL_SEARCH_MATCH;
		len = decode(s + i, n - i, cells, &k, &w);
		if (col + w > width)
			break;
		for (c = 0; c < k; c++)
			put(&r, cells[c], el);
		col += w;
		i += len;
	}
	el = base >= 0 ? base : (l->nspans ? (int)l->spans[l->nspans - 1].el : EL_DEFAULT);
	for (; col < width; col++)
		put(&r, L' ', el);
	flush(&r);
}

void
draw_text(int y, int x, int width, enum theme_elem el, const char *s)
{
	struct tline l = { 0 };

	tline_add(&l, el, s);
	draw_tline(y, x, width, &l, -1, NULL);
	tline_free(&l);
}

void
draw_fill(int y, int x, int width, enum theme_elem el)
{
	struct tline l = { 0 };

	draw_tline(y, x, width, &l, (int)el, NULL);
}
