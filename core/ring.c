/*
 * ring — a bounded record stream (see ring.h).  A circular array of
 * pointers, one allocation per record: pushes and drops are O(1) and a
 * record's bytes never move while it is held.
 */
#include "config.h"

#include "core/ring.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

struct ring {
	struct ring_record **slot;	/* max_records slots */
	size_t max_records, max_bytes;
	size_t head;			/* slot of the oldest record */
	size_t count, bytes;
	uint64_t next_seq;
	uint64_t dropped, dropped_bytes, truncated;
};

struct ring *
ring_new(size_t max_records, size_t max_bytes)
{
	struct ring *r = xcalloc(1, sizeof *r);

	r->max_records = max_records > 0 ? max_records : 1;
	r->max_bytes = max_bytes > 0 ? max_bytes : 1;
	r->slot = xcalloc(r->max_records, sizeof *r->slot);
	return r;
}

/* Free the oldest record; counted as a drop when `count` says so. */
static void
drop_oldest(struct ring *r, bool count)
{
	struct ring_record *rec = r->slot[r->head];

	r->slot[r->head] = NULL;
	r->head = (r->head + 1) % r->max_records;
	r->count--;
	r->bytes -= rec->len;
	if (count) {
		r->dropped++;
		r->dropped_bytes += rec->len;
	}
	free(rec);
}

void
ring_free(struct ring *r)
{
	if (r == NULL)
		return;
	ring_clear(r);
	free(r->slot);
	free(r);
}

void
ring_clear(struct ring *r)
{
	while (r->count > 0)
		drop_oldest(r, false);
	r->head = 0;
}

uint64_t
ring_push(struct ring *r, unsigned type, const void *data, size_t len)
{
	struct ring_record *rec;
	unsigned flags = 0;

	if (len > r->max_bytes) {
		/* Keep the start of a giant record rather than lose it all. */
		r->truncated++;
		len = r->max_bytes;
		flags |= RING_TRUNCATED;
	}
	while (r->count > 0 && (r->count == r->max_records || r->bytes + len > r->max_bytes))
		drop_oldest(r, true);
	rec = xmalloc(sizeof *rec + len + 1);
	rec->seq = r->next_seq++;
	rec->type = type;
	rec->flags = flags;
	rec->len = len;
	if (len > 0)
		memcpy(rec->data, data, len);
	rec->data[len] = '\0';
	r->slot[(r->head + r->count) % r->max_records] = rec;
	r->count++;
	r->bytes += len;
	return rec->seq;
}

size_t
ring_count(const struct ring *r)
{
	return r->count;
}

size_t
ring_bytes(const struct ring *r)
{
	return r->bytes;
}

size_t
ring_max_records(const struct ring *r)
{
	return r->max_records;
}

size_t
ring_max_bytes(const struct ring *r)
{
	return r->max_bytes;
}

uint64_t
ring_next_seq(const struct ring *r)
{
	return r->next_seq;
}

uint64_t
ring_first_seq(const struct ring *r)
{
	return r->next_seq - r->count;
}

const struct ring_record *
ring_get(const struct ring *r, size_t i)
{
	if (i >= r->count)
		return NULL;
	return r->slot[(r->head + i) % r->max_records];
}

const struct ring_record *
ring_get_seq(const struct ring *r, uint64_t seq)
{
	uint64_t first = ring_first_seq(r);

	if (seq < first || seq >= r->next_seq)
		return NULL;
	return ring_get(r, (size_t)(seq - first));
}

uint64_t
ring_dropped(const struct ring *r)
{
	return r->dropped;
}

uint64_t
ring_dropped_bytes(const struct ring *r)
{
	return r->dropped_bytes;
}

uint64_t
ring_truncated(const struct ring *r)
{
	return r->truncated;
}
