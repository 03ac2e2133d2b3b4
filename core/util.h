/*
 * util — allocation that never returns NULL, growable arrays, string
 * buffers and the error-cause convention used everywhere:
 *
 *   int f(..., char **cause);   returns 0 on success; on failure returns a
 *                               non-zero status and sets *cause to a
 *                               malloc'd sentence the caller shows and frees.
 *
 * Nothing here may call exit() except on allocation failure.
 */
#ifndef FP_UTIL_H
#define FP_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Exit codes and statuses shared by every command (documented in --help). */
enum fp_status {
	FP_OK = 0,
	FP_ERR = 1,		/* anything else: the message says */
	FP_EUSAGE = 2,		/* bad command line or command */
	FP_ENOPROC = 3,		/* no such process */
	FP_EPERM = 4,		/* permission denied */
	FP_ENOTPY = 5,		/* not a Python process */
	FP_EVERSION = 6,	/* unsupported or unknown Python version */
	FP_EEXITED = 7,		/* the process exited while being read */
};

#define FP_NELEM(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/*
 * Set *cause (if cause is not NULL) to a formatted message, replacing and
 * freeing any previous one.  Returns `status` so callers can write
 * `return fail(cause, FP_EPERM, "...")`.
 */
int fail(char **cause, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Make room for at least `need` elements in *array of *alloc elements of
 * `size` bytes each (growing geometrically).  The one helper every growable
 * array goes through.
 */
void array_reserve(void *array, size_t *alloc, size_t need, size_t size);
/* The call only when it must grow: a sampler pushes thousands of times a tick. */
#define ARRAY_PUSH(arr, n, alloc) \
	((size_t)(n) < (size_t)(alloc) ? (void)0 : array_reserve(&(arr), &(alloc), (n) + 1, sizeof *(arr)), \
	    &(arr)[(n)++])

/* A growable NUL-terminated string. */
struct sbuf {
	char *s;
	size_t len, alloc;
};
void sbuf_add(struct sbuf *b, const char *s);
void sbuf_addn(struct sbuf *b, const char *s, size_t n);
void sbuf_addf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *sbuf_steal(struct sbuf *b);	/* returns the string (never NULL); b is emptied */
void sbuf_free(struct sbuf *b);

/* Free the n strings of v and v (a vector of malloc'd strings; NULL: nothing). */
void strv_free(char **v, size_t n);
/* Whether pid is among the n of v. */
bool pid_in(const pid_t *v, size_t n, pid_t pid);

/* Read a whole small file (e.g. under /proc); NULL with errno on failure. */
char *read_file_str(const char *path, size_t *len);

/* Monotonic time in nanoseconds. */
uint64_t now_ns(void);

#endif
