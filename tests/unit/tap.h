/*
 * tap.h — the smallest TAP producer for unit tests run by automake's
 * tap-driver.  Header-only; every function is static.
 */
#ifndef FP_TAP_H
#define FP_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_count;
static int tap_failed;

static inline void
plan(int n)
{
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline int
ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline int
ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

static inline void
skip(const char *why, const char *what)
{
	tap_count++;
	printf("ok %d - %s # SKIP %s\n", tap_count, what, why);
	fflush(stdout);
}

static inline void
diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static inline void
diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Equal strings, with both shown on failure. */
#define is_str(got, want, ...) \
	(ok((got) != NULL && strcmp((got), (want)) == 0, __VA_ARGS__) || \
	 (diag("  got: '%s'", (got) ? (got) : "(null)"), diag(" want: '%s'", (want)), 0))
#define is_int(got, want, ...) \
	(ok((long long)(got) == (long long)(want), __VA_ARGS__) || \
	 (diag("  got: %lld", (long long)(got)), diag(" want: %lld", (long long)(want)), 0))

static inline int
done_testing(void)
{
	printf("1..%d\n", tap_count);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif
