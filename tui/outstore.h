/*
 * outstore — what the output and console panes keep: a bounded sequence of records
 * (a command's heading, a line of its output, a note of ours), oldest
 * first.  Past either bound (records, bytes) the oldest records go, and
 * every one that goes is counted, so that the pane can say so instead of
 * growing without end while a statement prints millions of lines.
 *
 * A thin typed view of core/ring (the bounded record stream that watch,
 * tt and monitor fill too), so that the output and console panes share
 * one ring and one way of keeping their view still while old lines go.
 * Text is stored as given; the caller escapes it (core/termsafe) before
 * pushing or when drawing.
 */
#ifndef FP_TUI_OUTSTORE_H
#define FP_TUI_OUTSTORE_H

#include <stddef.h>
#include <stdint.h>

enum outstore_kind {
	OUT_HEAD,		/* a command's heading: the line typed */
	OUT_LINE,		/* a line of its output */
	OUT_NOTE,		/* ours: how it ended, what was cut */
};

struct outstore;

/* At most max_records records and max_bytes bytes of text (both > 0). */
struct outstore *outstore_new(size_t max_records, size_t max_bytes);
void outstore_free(struct outstore *s);

/* Append a record (text copied); returns how many old records went. */
size_t outstore_push(struct outstore *s, enum outstore_kind kind, const char *text, size_t len);
/* Forget every record (the drop count stays). */
void outstore_clear(struct outstore *s);
size_t outstore_count(const struct outstore *s);
/* The i-th record, oldest first (i < outstore_count()): its text (NUL
 * terminated) and kind. */
const char *outstore_get(const struct outstore *s, size_t i, enum outstore_kind *kind);
/* Records dropped to keep the bounds since the store was made. */
uint64_t outstore_dropped(const struct outstore *s);

#endif
