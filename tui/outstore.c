/*
 * outstore — the panes' view of core/ring: typed records, and how many
 * old ones a push let go (what a pane needs to keep its view still).
 */
#include "config.h"

#include "tui/outstore.h"

#include "core/ring.h"

/* A struct outstore is a struct ring: the type only keeps the panes' calls
 * to the five they need, with their record kinds. */

struct outstore *
outstore_new(size_t max_records, size_t max_bytes)
{
	return (struct outstore *)ring_new(max_records, max_bytes);
}

void
outstore_free(struct outstore *s)
{
	ring_free((struct ring *)s);
}

size_t
outstore_push(struct outstore *s, enum outstore_kind kind, const char *text, size_t len)
{
	struct ring *r = (struct ring *)s;
	uint64_t before = ring_dropped(r);

	ring_push(r, (unsigned)kind, text, len);
	return (size_t)(ring_dropped(r) - before);
}

void
outstore_clear(struct outstore *s)
{
	ring_clear((struct ring *)s);
}

size_t
outstore_count(const struct outstore *s)
{
	return ring_count((const struct ring *)s);
}

const char *
outstore_get(const struct outstore *s, size_t i, enum outstore_kind *kind)
{
	const struct ring_record *rec = ring_get((const struct ring *)s, i);

	if (rec == NULL)
		return NULL;
	if (kind != NULL)
		*kind = (enum outstore_kind)rec->type;
	return rec->data;
}

uint64_t
outstore_dropped(const struct outstore *s)
{
	return ring_dropped((const struct ring *)s);
}
