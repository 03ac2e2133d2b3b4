/*
 * textstream — output text into lines in a ring (see textstream.h).
 */
#include "config.h"

#include "core/textstream.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

struct textstream {
	struct ring *ring;
	struct sbuf partial;	/* the line being received, at most the byte bound */
	uint64_t cut, total;
};

struct textstream *
textstream_new(size_t max_lines, size_t max_bytes)
{
	struct textstream *ts = xcalloc(1, sizeof *ts);

	ts->ring = ring_new(max_lines, max_bytes);
	return ts;
}

void
textstream_free(struct textstream *ts)
{
	if (ts == NULL)
		return;
	ring_free(ts->ring);
	sbuf_free(&ts->partial);
	free(ts);
}

/* Add to the partial line, cutting what goes past the byte bound. */
static void
extend(struct textstream *ts, const char *text, size_t len)
{
	size_t room = ring_max_bytes(ts->ring) - ts->partial.len;

	if (len > room) {
		ts->cut += len - room;
		len = room;
	}
	if (len > 0)
		sbuf_addn(&ts->partial, text, len);
}

static void
push_partial(struct textstream *ts, unsigned kind)
{
	ring_push(ts->ring, kind, ts->partial.s ? ts->partial.s : "", ts->partial.len);
	ts->partial.len = 0;
	if (ts->partial.s != NULL)
		ts->partial.s[0] = '\0';
}

void
textstream_add(struct textstream *ts, const char *text, size_t len)
{
	const char *nl;

	ts->total += len;
	while (len > 0 && (nl = memchr(text, '\n', len)) != NULL) {
		size_t n = (size_t)(nl - text);

		if (ts->partial.len == 0 && n <= ring_max_bytes(ts->ring)) {
			/* The common case: a whole line in one piece, no copy to partial. */
			ring_push(ts->ring, TEXTSTREAM_OUT, text, n);
		} else {
			extend(ts, text, n);
			push_partial(ts, TEXTSTREAM_OUT);
		}
		text += n + 1;
		len -= n + 1;
	}
	extend(ts, text, len);
}

void
textstream_flush(struct textstream *ts)
{
	if (ts->partial.len > 0)
		push_partial(ts, TEXTSTREAM_OUT);
}

void
textstream_note(struct textstream *ts, const char *line)
{
	textstream_flush(ts);
	ring_push(ts->ring, TEXTSTREAM_NOTE, line, strlen(line));
}

const struct ring *
textstream_ring(const struct textstream *ts)
{
	return ts->ring;
}

uint64_t
textstream_dropped(const struct textstream *ts)
{
	return ring_dropped(ts->ring);
}

uint64_t
textstream_cut_bytes(const struct textstream *ts)
{
	return ts->cut;
}

uint64_t
textstream_total_bytes(const struct textstream *ts)
{
	return ts->total;
}
