#include "config.h"

#include "core/termsafe.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* Length of the UTF-8 sequence at s, its code point in *cp; 0 if invalid. */
static size_t
utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len, i;
	uint32_t v;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	*cp = v;
	return len;
}

/* Code points that are valid UTF-8 and still must not reach a terminal. */
static bool
hostile_code_point(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) ||		/* C1 controls */
	    cp == 0x061c || cp == 0x200e || cp == 0x200f ||	/* bidi marks */
	    (cp >= 0x202a && cp <= 0x202e) ||		/* bidi embeddings, overrides */
	    (cp >= 0x2066 && cp <= 0x2069) ||		/* bidi isolates */
	    cp == 0x2028 || cp == 0x2029;		/* line and paragraph separators */
}

size_t
termsafe_next(const char *s, size_t n, unsigned keep, uint32_t *cp, char esc[TERMSAFE_ESC_MAX])
{
	unsigned char c = (unsigned char)s[0];
	size_t len;

	*cp = 0;
	esc[0] = '\0';
	if (c >= 0x20 && c < 0x7f) {
		*cp = c;
		return 1;
	}
	if (c == '\n' || c == '\t') {
		if (keep & (c == '\n' ? TERMSAFE_KEEP_NL : TERMSAFE_KEEP_TAB))
			*cp = c;
		else
			memcpy(esc, c == '\n' ? "\\n" : "\\t", 3);
		return 1;
	}
	if (c == '\r') {
		memcpy(esc, "\\r", 3);
		return 1;
	}
	if (c < 0x80 || (len = utf8_decode((const unsigned char *)s, n, cp)) == 0) {
		snprintf(esc, TERMSAFE_ESC_MAX, "\\x%02x", c);
		return 1;
	}
	if (hostile_code_point(*cp)) {
		snprintf(esc, TERMSAFE_ESC_MAX, "\\u%04x", (unsigned)*cp);
		*cp = 0;
	}
	return len;
}

void
termsafe_add(struct sbuf *out, const char *s, size_t n, unsigned keep)
{
	char esc[TERMSAFE_ESC_MAX];
	size_t i = 0, run = 0, len;
	uint32_t cp;

	/* Runs of characters shown as they are are copied in one go. */
	while (i < n) {
		len = termsafe_next(s + i, n - i, keep, &cp, esc);
		if (esc[0] != '\0') {
			sbuf_addn(out, s + run, i - run);
			sbuf_add(out, esc);
			run = i + len;
		}
		i += len;
	}
	sbuf_addn(out, s + run, n - run);
}

void
termsafe_adds(struct sbuf *out, const char *s, unsigned keep)
{
	if (s == NULL)
		s = "?";
	termsafe_add(out, s, strlen(s), keep);
}

/* One conversion of termsafe_addf: spec is "%...c" with its length modifier. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void
convert(struct sbuf *out, const char *spec, const char *len, char conv, va_list *ap)
{
	bool l = strcmp(len, "l") == 0, ll = strcmp(len, "ll") == 0, z = strcmp(len, "z") == 0;
	bool j = strcmp(len, "j") == 0, t = strcmp(len, "t") == 0;

	switch (conv) {
	case 'd':
	case 'i':
		if (l)
			sbuf_addf(out, spec, va_arg(*ap, long));
		else if (ll)
			sbuf_addf(out, spec, va_arg(*ap, long long));
		else if (z)
			sbuf_addf(out, spec, va_arg(*ap, ssize_t));
		else if (j)
			sbuf_addf(out, spec, va_arg(*ap, intmax_t));
		else if (t)
			sbuf_addf(out, spec, va_arg(*ap, ptrdiff_t));
		else
			sbuf_addf(out, spec, va_arg(*ap, int));	/* hh, h promote to int */
		break;
	case 'u':
	case 'x':
	case 'X':
	case 'o':
		if (l)
			sbuf_addf(out, spec, va_arg(*ap, unsigned long));
		else if (ll)
			sbuf_addf(out, spec, va_arg(*ap, unsigned long long));
		else if (z)
			sbuf_addf(out, spec, va_arg(*ap, size_t));
		else if (j)
			sbuf_addf(out, spec, va_arg(*ap, uintmax_t));
		else if (t)
			sbuf_addf(out, spec, va_arg(*ap, ptrdiff_t));
		else
			sbuf_addf(out, spec, va_arg(*ap, unsigned));
		break;
	case 'c':
		sbuf_addf(out, spec, va_arg(*ap, int));
		break;
	case 'p':
		sbuf_addf(out, spec, va_arg(*ap, void *));
		break;
	default:	/* e f g E G a A */
		sbuf_addf(out, spec, va_arg(*ap, double));
		break;
	}
}
#pragma GCC diagnostic pop

/* s as a single-line field, at most `max` characters shown, then "..." if cut. */
static void
add_quoted(struct sbuf *out, const char *s, size_t max)
{
	char esc[TERMSAFE_ESC_MAX];
	size_t n, i = 0, shown = 0, len, w;
	uint32_t cp;

	if (s == NULL)
		s = "?";
	n = strlen(s);
	while (i < n) {
		len = termsafe_next(s + i, n - i, TERMSAFE_FIELD, &cp, esc);
		w = esc[0] != '\0' ? strlen(esc) : 1;
		if (shown + w > max) {
			sbuf_add(out, "...");
			return;
		}
		if (esc[0] != '\0')
			sbuf_add(out, esc);
		else
			sbuf_addn(out, s + i, len);
		shown += w;
		i += len;
	}
}

/* termsafe_addf with every %s cut to `max` characters. */
static void
vaddf(struct sbuf *out, size_t max, const char *fmt, va_list args)
{
	const char *p = fmt, *pct, *lenp;
	char spec[32], len[3];
	va_list ap;
	size_t k;

	va_copy(ap, args);
	while ((pct = strchr(p, '%')) != NULL) {
		sbuf_addn(out, p, (size_t)(pct - p));
		p = pct + 1;
		if (*p == '%') {
			sbuf_add(out, "%");
			p++;
			continue;
		}
		p += strspn(p, "-+ #0");
		p += strspn(p, "0123456789");
		if (*p == '.') {
			p++;
			p += strspn(p, "0123456789");
		}
		lenp = p;
		p += strspn(p, "hljzt");
		k = (size_t)(p - lenp) < sizeof len ? (size_t)(p - lenp) : sizeof len - 1;
		memcpy(len, lenp, k);
		len[k] = '\0';
		if (*p == '\0')
			break;	/* a lone '%' at the end: the compiler's format check says so */
		if (*p == 's') {
			add_quoted(out, va_arg(ap, const char *), max);
		} else {
			k = (size_t)(p + 1 - pct) < sizeof spec ? (size_t)(p + 1 - pct) : sizeof spec - 1;
			memcpy(spec, pct, k);
			spec[k] = '\0';
			convert(out, spec, len, *p, &ap);
		}
		p++;
	}
	sbuf_add(out, p);
	va_end(ap);
}

void
termsafe_addf(struct sbuf *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vaddf(out, SIZE_MAX, fmt, ap);
	va_end(ap);
}

int
termsafe_fail(char **cause, int status, const char *fmt, ...)
{
	struct sbuf text = { 0 };
	va_list ap;

	if (cause == NULL)
		return status;
	va_start(ap, fmt);
	vaddf(&text, TERMSAFE_QUOTE_MAX, fmt, ap);
	va_end(ap);
	free(*cause);
	*cause = sbuf_steal(&text);
	return status;
}

char *
termsafe_quote(const char *s, size_t max)
{
	struct sbuf out = { 0 };

	add_quoted(&out, s, max);
	return sbuf_steal(&out);
}

void
termsafe_write(FILE *f, const char *s, size_t n, unsigned keep)
{
	struct sbuf out = { 0 };

	termsafe_add(&out, s, n, keep);
	if (out.len > 0)
		fwrite(out.s, 1, out.len, f);
	sbuf_free(&out);
}

void
termsafe_error(FILE *f, const char *cause)
{
	char *text = termsafe_quote(cause ? cause : "failed", TERMSAFE_ERROR_MAX);

	fprintf(f, "flight_profiler: %s\n", text);
	free(text);
}
