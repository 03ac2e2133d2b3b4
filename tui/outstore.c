/*
 * outstore — a circular array of records with a record and a byte bound.
 */
#include "config.h"

#include "tui/outstore.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

struct orec {
	enum outstore_kind kind;
	char *text;
	size_t len;
};

struct outstore {
	struct orec *r;
	size_t cap, head, n;	/* r[head] is the oldest of n */
	size_t bytes, max_bytes;
	uint64_t dropped;
};

struct outstore *
outstore_new(size_t max_records, size_t max_bytes)
{
	struct outstore *s = xcalloc(1, sizeof *s);

	s->cap = max_records ? max_records : 1;
	s->max_bytes = max_bytes ? max_bytes : 1;
	s->r = xcalloc(s->cap, sizeof *s->r);
	return s;
}

static void
drop_oldest(struct outstore *s)
{
	struct orec *o = &s->r[s->head];

	s->bytes -= o->len;
	free(o->text);
	o->text = NULL;
	s->head = (s->head + 1) % s->cap;
	s->n--;
	s->dropped++;
}

size_t
outstore_push(struct outstore *s, enum outstore_kind kind, const char *text, size_t len)
{
	size_t gone = 0;
	struct orec *o;

	if (len > s->max_bytes)
		len = s->max_bytes;	/* its start is what a reader wants */
	while (s->n > 0 && (s->n == s->cap || s->bytes + len > s->max_bytes)) {
		drop_oldest(s);
		gone++;
	}
	o = &s->r[(s->head + s->n) % s->cap];
	o->kind = kind;
	o->text = xmalloc(len + 1);
	memcpy(o->text, text, len);
	o->text[len] = '\0';
	o->len = len;
	s->bytes += len;
	s->n++;
	return gone;
}

void
outstore_clear(struct outstore *s)
{
	uint64_t dropped = s->dropped;

	while (s->n > 0)
		drop_oldest(s);
	s->dropped = dropped;
	s->head = 0;
}

size_t
outstore_count(const struct outstore *s)
{
	return s->n;
}

const char *
outstore_get(const struct outstore *s, size_t i, enum outstore_kind *kind)
{
	const struct orec *o;

	if (i >= s->n)
		return NULL;
	o = &s->r[(s->head + i) % s->cap];
	if (kind != NULL)
		*kind = o->kind;
	return o->text;
}

uint64_t
outstore_dropped(const struct outstore *s)
{
	return s->dropped;
}

void
outstore_free(struct outstore *s)
{
	if (s == NULL)
		return;
	outstore_clear(s);
	free(s->r);
	free(s);
}
