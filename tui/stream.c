/*
 * stream — a background watch, trace or monitor (see stream.h): starting it,
 * stopping it, and what its end says outside its pane.
 */
#include "config.h"

#include "tui/stream.h"

#include <stdlib.h>
#include <string.h>

#include "core/runner.h"

#define TURN_MS 250	/* while a stop is awaited: look at the clock this often */

struct stream {
	struct runner_bg *bg;	/* NULL when none runs */
	char *line;		/* as typed, for the output pane's heading */
	bool cancelled;
	uint64_t cancelled_ns;	/* when the stop was asked for */
};

static void
on_end(void *ctx, int rc, const char *text, const char *cause)
{
	struct tui *t = ctx;
	struct stream *st = t->stream;
	struct pane *output = tui_pane(t, &pane_output_ops);

	st->bg = NULL;
	t->dirty = true;
	if (t->quit)
		return;
	/* What its pane did not take (a stop before the first record): as runner_exec says it. */
	if (*text != '\0') {
		pane_output_set(output, st->line, text);
		if (!t->console_open)
			tui_show_pane(t, output, false);
	}
	if (rc != FP_OK && !t->exited)
		tui_status(t, true, "%s", cause ? cause : "failed");
}

static const struct runner_bg_handler handler = { .end = on_end };

bool
stream_is(const struct tui *t, const char *line)
{
	return t->runner != NULL && runner_is_background(t->runner, line);
}

bool
stream_running(const struct tui *t)
{
	return t->stream != NULL && t->stream->bg != NULL;
}

bool
stream_start(struct tui *t, const char *line)
{
	struct stream *st;
	char *cause = NULL;

	if (t->stream == NULL)
		t->stream = xcalloc(1, sizeof *t->stream);
	st = t->stream;
	if (st->bg != NULL) {
		tui_status(t, true, "a watch, trace or monitor runs already: q in its pane stops it "
		    "(one at a time)");
		return false;
	}
	free(st->line);
	st->line = xstrdup(line);
	st->cancelled = false;
	if (runner_bg_start(t->runner, line, &handler, t, &st->bg, &cause) != FP_OK) {
		tui_status(t, true, "%s", cause ? cause : "failed");
		free(cause);
		return false;
	}
	tui_status(t, false, "%s: started; the console and : commands go on beside it", line);
	t->dirty = true;
	return true;
}

void
stream_cancel(struct tui *t)
{
	struct stream *st = t->stream;

	if (!stream_running(t) || st->cancelled)
		return;
	if (runner_bg_cancel(st->bg, NULL) == FP_OK) {
		st->cancelled = true;
		st->cancelled_ns = now_ns();
	}
	t->dirty = true;
}

int
stream_tick(struct tui *t)
{
	struct stream *st = t->stream;

	if (!stream_running(t) || !st->cancelled)
		return -1;
	if (now_ns() - st->cancelled_ns > (uint64_t)RUNNER_CANCEL_GRACE_MS * 1000000) {
		runner_bg_give_up(st->bg);	/* its end (on_end) clears st->bg */
		return -1;
	}
	return TURN_MS;
}

void
stream_free(struct tui *t)
{
	if (t->stream == NULL)
		return;
	/* Closing the session ends it in the agent; no callback may come. */
	runner_bg_forget(t->stream->bg);
	free(t->stream->line);
	free(t->stream);
	t->stream = NULL;
}
