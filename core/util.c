#include "config.h"

#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void
oom(void)
{
	static const char msg[] = "flight_profiler: out of memory\n";

	(void)!write(2, msg, sizeof msg - 1);
	abort();
}

void *
xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (p == NULL)
		oom();
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	return s;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

int
fail(char **cause, int status, const char *fmt, ...)
{
	va_list ap;

	if (cause != NULL) {
		free(*cause);
		va_start(ap, fmt);
		*cause = xvasprintf(fmt, ap);
		va_end(ap);
	}
	return status;
}

void
array_reserve(void *array, size_t *alloc, size_t need, size_t size)
{
	void **p = array;
	size_t n;

	if (need <= *alloc)
		return;
	n = *alloc ? *alloc : 8;
	while (n < need)
		n *= 2;
	if (n > SIZE_MAX / size)
		oom();
	*p = xrealloc(*p, n * size);
	*alloc = n;
}

void
sbuf_addn(struct sbuf *b, const char *s, size_t n)
{
	array_reserve(&b->s, &b->alloc, b->len + n + 1, 1);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void
sbuf_add(struct sbuf *b, const char *s)
{
	sbuf_addn(b, s, strlen(s));
}

void
sbuf_addf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	sbuf_add(b, s);
	free(s);
}

char *
sbuf_steal(struct sbuf *b)
{
	char *s = b->s ? b->s : xstrdup("");

	b->s = NULL;
	b->len = b->alloc = 0;
	return s;
}

void
sbuf_free(struct sbuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->alloc = 0;
}

void
strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; v != NULL && i < n; i++)
		free(v[i]);
	free(v);
}

bool
pid_in(const pid_t *v, size_t n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == pid)
			return true;
	return false;
}

char *
read_file_str(const char *path, size_t *lenp)
{
	struct sbuf b = { 0 };
	char chunk[4096];
	ssize_t n;
	int fd, saved;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		n = read(fd, chunk, sizeof chunk);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			saved = errno;
			close(fd);
			sbuf_free(&b);
			errno = saved;
			return NULL;
		}
		if (n == 0)
			break;
		sbuf_addn(&b, chunk, (size_t)n);
	}
	close(fd);
	if (lenp != NULL)
		*lenp = b.len;
	return sbuf_steal(&b);
}

uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
