/*
 * ring.c — the bounded record stream: both bounds, wrap-around, what is
 * dropped and counted, and a record bigger than the whole byte bound.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ring.h"
#include "core/textstream.h"
#include "tests/unit/tap.h"

/* Every held record in order, consecutive seqs, and the byte sum agrees. */
static int
consistent(const struct ring *r)
{
	size_t i, bytes = 0;
	uint64_t seq = ring_first_seq(r);

	for (i = 0; i < ring_count(r); i++) {
		const struct ring_record *rec = ring_get(r, i);

		if (rec == NULL || rec->seq != seq++ || rec->data[rec->len] != '\0')
			return 0;
		if (ring_get_seq(r, rec->seq) != rec)
			return 0;
		bytes += rec->len;
	}
	return bytes == ring_bytes(r) && seq == ring_next_seq(r) && ring_get(r, i) == NULL &&
	    bytes <= ring_max_bytes(r) && ring_count(r) <= ring_max_records(r);
}

static void
test_count_bound_and_wrap(void)
{
	struct ring *r = ring_new(4, 1 << 20);
	char text[32];
	int i;

	ok(ring_count(r) == 0 && ring_first_seq(r) == 0 && ring_get(r, 0) == NULL,
	    "a new ring is empty");
	for (i = 0; i < 11; i++) {
		snprintf(text, sizeof text, "line %d", i);
		ok(ring_push(r, 7, text, strlen(text)) == (uint64_t)i, "push %d gets seq %d", i, i);
	}
	ok(ring_count(r) == 4, "the record bound holds: %zu records", ring_count(r));
	ok(ring_dropped(r) == 7, "the 7 oldest were dropped and counted (%llu)",
	    (unsigned long long)ring_dropped(r));
	ok(ring_dropped_bytes(r) == 7 * strlen("line 0"), "their bytes are counted too");
	ok(strcmp(ring_get(r, 0)->data, "line 7") == 0 && strcmp(ring_get(r, 3)->data, "line 10") == 0,
	    "oldest first after wrapping: '%s' .. '%s'", ring_get(r, 0)->data, ring_get(r, 3)->data);
	ok(ring_get(r, 0)->type == 7, "the type is kept");
	ok(ring_get_seq(r, 6) == NULL && ring_get_seq(r, 7) != NULL && ring_get_seq(r, 11) == NULL,
	    "by seq: dropped and future records are absent");
	ok(consistent(r), "seqs consecutive, byte count exact");
	ring_clear(r);
	ok(ring_count(r) == 0 && ring_bytes(r) == 0 && ring_dropped(r) == 7 &&
	    ring_first_seq(r) == 11, "clear empties, keeps the drop count and the seqs");
	ring_push(r, 1, "after", 5);
	ok(ring_get(r, 0)->seq == 11 && consistent(r), "pushes go on after a clear");
	ring_free(r);
}

static void
test_byte_bound(void)
{
	struct ring *r = ring_new(1000, 100);
	char ten[10], larger[25];
	int i;

	memset(ten, 'x', sizeof ten);
	memset(larger, 'y', sizeof larger);
	for (i = 0; i < 10; i++)
		ring_push(r, 0, ten, sizeof ten);
	ok(ring_count(r) == 10 && ring_bytes(r) == 100 && ring_dropped(r) == 0,
	    "exactly at the byte bound: nothing dropped");
	ring_push(r, 0, ten, 1);
	ok(ring_count(r) == 10 && ring_bytes(r) == 91 && ring_dropped(r) == 1,
	    "one byte more drops the oldest record (%zu bytes held)", ring_bytes(r));
	ring_push(r, 0, larger, sizeof larger);
	ok(ring_bytes(r) == 96 && ring_dropped(r) == 3 && consistent(r),
	    "a larger record drops as many as it needs (%llu dropped, %zu bytes)",
	    (unsigned long long)ring_dropped(r), ring_bytes(r));
	ring_push(r, 0, "", 0);
	ok(ring_get(r, ring_count(r) - 1)->len == 0 && consistent(r), "an empty record is a record");
	ring_free(r);
}

static void
test_huge_record(void)
{
	struct ring *r = ring_new(8, 64);
	size_t big = 1 << 20;
	char *data = malloc(big);
	const struct ring_record *rec;

	memset(data, 'a', big);
	data[0] = 'S';
	ring_push(r, 0, "small", 5);
	ring_push(r, 0, data, big);
	rec = ring_get(r, ring_count(r) - 1);
	ok(ring_count(r) == 1 && rec->len == 64 && rec->data[0] == 'S',
	    "a 1 MiB record in a 64-byte ring is kept, cut to 64 bytes");
	ok((rec->flags & RING_TRUNCATED) && ring_truncated(r) == 1, "and marked truncated");
	ok(ring_dropped(r) == 1 && consistent(r), "the record before it was dropped to make room");
	ring_push(r, 0, "next", 4);
	ok(ring_count(r) == 1 && strcmp(ring_get(r, 0)->data, "next") == 0 &&
	    !(ring_get(r, 0)->flags & RING_TRUNCATED) && ring_dropped(r) == 2,
	    "the next record pushes the giant one out");
	free(data);
	ring_free(r);
}

/* A long run against a model of what must be held: the last N that fit. */
static void
test_many(void)
{
	struct ring *r = ring_new(1000, 20000);
	uint64_t pushed = 0, want_first;
	size_t i, sum;
	char buf[64];
	int good = 1;

	for (i = 0; i < 200000; i++) {
		int n = snprintf(buf, sizeof buf, "%zu:%.*s", i, (int)(i % 40), "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopq");

		ring_push(r, (unsigned)(i & 3), buf, (size_t)n);
		pushed++;
		if (i % 9973 == 0 && !consistent(r))
			good = 0;
	}
	ok(good && consistent(r), "200,000 pushes keep the ring consistent");
	ok(ring_dropped(r) + ring_count(r) == pushed, "held + dropped == pushed (%zu + %llu)",
	    ring_count(r), (unsigned long long)ring_dropped(r));
	/* The held ones are the newest that fit: one more older would not. */
	want_first = ring_first_seq(r);
	sum = ring_bytes(r);
	snprintf(buf, sizeof buf, "%llu:", (unsigned long long)want_first);
	ok(strncmp(ring_get(r, 0)->data, buf, strlen(buf)) == 0, "the oldest held is seq %llu",
	    (unsigned long long)want_first);
	{
		int n = snprintf(buf, sizeof buf, "%llu:%.*s", (unsigned long long)(want_first - 1),
		    (int)((want_first - 1) % 40), "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopq");

		ok(ring_count(r) == 1000 || sum + (size_t)n > 20000,
		    "no older record would have fit (%zu records, %zu bytes)", ring_count(r), sum);
	}
	ring_free(r);
}

static const char *
line(const struct textstream *ts, size_t i)
{
	const struct ring_record *rec = ring_get(textstream_ring(ts), i);

	return rec ? rec->data : "(none)";
}

/* Output in arbitrary pieces becomes lines; the bounds hold and are reported. */
static void
test_textstream(void)
{
	struct textstream *ts = textstream_new(3, 16);
	char big[100];
	int i;

	textstream_add(ts, "hel", 3);
	textstream_add(ts, "lo\nwor", 6);
	ok(ring_count(textstream_ring(ts)) == 1 && strcmp(line(ts, 0), "hello") == 0,
	    "a line split over two pieces is one line; the partial one waits");
	textstream_add(ts, "ld\n\nx", 5);
	ok(ring_count(textstream_ring(ts)) == 3 && strcmp(line(ts, 1), "world") == 0 &&
	    strcmp(line(ts, 2), "") == 0, "an empty line is a line");
	textstream_note(ts, "[cancelled]");
	ok(ring_count(textstream_ring(ts)) == 3 && strcmp(line(ts, 1), "x") == 0 &&
	    strcmp(line(ts, 2), "[cancelled]") == 0 &&
	    ring_get(textstream_ring(ts), 2)->type == TEXTSTREAM_NOTE,
	    "a note flushes the partial line first; the oldest lines went");
	ok(textstream_dropped(ts) == 2, "2 lines dropped to the line bound");
	memset(big, 'b', sizeof big);
	textstream_add(ts, big, 60);
	textstream_add(ts, big, 40);
	textstream_add(ts, "\n", 1);
	ok(strlen(line(ts, ring_count(textstream_ring(ts)) - 1)) == 16 &&
	    textstream_cut_bytes(ts) == 84, "a 100-byte line in pieces is cut to 16 bytes, 84 counted");
	for (i = 0; i < 200000; i++)
		textstream_add(ts, "line\n", 5);
	ok(ring_count(textstream_ring(ts)) == 3 && ring_bytes(textstream_ring(ts)) <= 16 &&
	    textstream_dropped(ts) == 6 + 200000 - 3,
	    "200,000 lines keep 3 and count the rest (%llu dropped)",
	    (unsigned long long)textstream_dropped(ts));
	ok(textstream_total_bytes(ts) == 3 + 6 + 5 + 100 + 1 + 1000000, "every byte received is counted");
	textstream_free(ts);
}

int
main(void)
{
	plan(21 + 4 + 4 + 4 + 7);
	test_count_bound_and_wrap();
	test_byte_bound();
	test_huge_record();
	test_many();
	test_textstream();
	return tap_failed != 0;
}
