/*
 * ring — a bounded stream of typed records: what keeps arriving while the
 * user works (statement output, watch and tt records, monitor rows, live
 * mem) and must never grow the client without bound.
 *
 * Two bounds hold at once: a number of records and a number of payload
 * bytes.  Pushing past either drops the oldest records, and every drop is
 * counted so a pane can say "N dropped" instead of silently losing them.
 * A single record larger than the byte bound is kept truncated to it (its
 * start is what a reader wants) and marked RING_TRUNCATED.
 *
 * Records are addressed by a sequence number that never repeats
 * (ring_first_seq() … ring_next_seq() - 1 are held), so a reader that
 * remembers where it was can tell what it missed.  Not thread-safe: one
 * owner (the client's event loop) pushes and reads.
 */
#ifndef FP_RING_H
#define FP_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RING_TRUNCATED 0x1u	/* the record was cut to the byte bound */

struct ring_record {
	uint64_t seq;
	unsigned type;		/* the owner's: a line of output, a watch hit, ... */
	unsigned flags;		/* RING_TRUNCATED */
	size_t len;		/* bytes of data, a NUL follows them */
	char data[];
};

struct ring;

/* A ring holding at most max_records records and max_bytes payload bytes (both > 0). */
struct ring *ring_new(size_t max_records, size_t max_bytes);
void ring_free(struct ring *r);

/* Append a record (data copied); returns its sequence number. */
uint64_t ring_push(struct ring *r, unsigned type, const void *data, size_t len);

/* Forget every record; the drop count and sequence numbers go on. */
void ring_clear(struct ring *r);

size_t ring_count(const struct ring *r);
size_t ring_bytes(const struct ring *r);	/* payload bytes held */
size_t ring_max_records(const struct ring *r);
size_t ring_max_bytes(const struct ring *r);
uint64_t ring_first_seq(const struct ring *r);	/* the oldest held (== next when empty) */
uint64_t ring_next_seq(const struct ring *r);	/* what the next push gets */

/* The i-th record held, oldest first (i < ring_count()), or NULL. */
const struct ring_record *ring_get(const struct ring *r, size_t i);
/* The record with sequence number seq, or NULL if dropped or not yet pushed. */
const struct ring_record *ring_get_seq(const struct ring *r, uint64_t seq);

/* Records dropped to keep the bounds, and their bytes (truncation not counted). */
uint64_t ring_dropped(const struct ring *r);
uint64_t ring_dropped_bytes(const struct ring *r);
/* Records pushed truncated to the byte bound. */
uint64_t ring_truncated(const struct ring *r);

#endif
