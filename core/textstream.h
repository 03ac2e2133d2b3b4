/*
 * textstream — statement and console output as it streams in: text in
 * pieces of any size becomes lines in a bounded ring (core/ring), so a
 * statement printing millions of lines keeps the client's memory bounded
 * and says how many lines it dropped.  The output model panes and the
 * line mode read; it knows nothing of screens.
 *
 * A line longer than the ring's byte bound is cut (its start kept, the
 * rest counted in textstream_cut_bytes) rather than buffered whole.
 */
#ifndef FP_TEXTSTREAM_H
#define FP_TEXTSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "core/ring.h"

/* Record types in the ring. */
enum textstream_kind {
	TEXTSTREAM_OUT,		/* a line of output */
	TEXTSTREAM_NOTE,	/* ours: an echo, an error, "cancelled" */
};

struct textstream;

/* At most max_lines lines and max_bytes bytes of text held. */
struct textstream *textstream_new(size_t max_lines, size_t max_bytes);
void textstream_free(struct textstream *ts);

/* Add output text (not NUL-terminated); complete lines enter the ring. */
void textstream_add(struct textstream *ts, const char *text, size_t len);
/* A line of our own (no newline), after any pending partial line. */
void textstream_note(struct textstream *ts, const char *line);
/* The output ended: a partial last line enters the ring. */
void textstream_flush(struct textstream *ts);

const struct ring *textstream_ring(const struct textstream *ts);
/* Lines dropped to keep the bounds. */
uint64_t textstream_dropped(const struct textstream *ts);
/* Bytes cut from lines longer than the byte bound. */
uint64_t textstream_cut_bytes(const struct textstream *ts);
/* Output bytes received in all. */
uint64_t textstream_total_bytes(const struct textstream *ts);

#endif
