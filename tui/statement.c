/*
 * statement — a background `execute` (see statement.h): a session handler
 * that writes into the output pane, and the loop's turn on the socket.
 */
#include "config.h"

#include "tui/statement.h"

#include <stdlib.h>
#include <string.h>

#include "core/runner.h"
#include "core/session.h"
#include "tui/inside.h"

#define TURN_MS 250	/* while one runs: look at the session this often */

struct statement {
	bool running, cancelled;
	uint64_t cancelled_ns;	/* when the KeyboardInterrupt was asked for */
	bool entry_open;	/* the output pane's open entry is ours */
	uint64_t id;
	struct session *session;	/* the one it was started on */
	char *line;		/* as typed, for the output pane's headings */
	struct runner_statement relay;	/* the runner's calls back */
};

static struct statement *
get(struct tui *t)
{
	if (t->stmt == NULL)
		t->stmt = xcalloc(1, sizeof *t->stmt);
	return t->stmt;
}

static struct pane *
sink(struct tui *t)
{
	return tui_pane(t, &pane_output_ops);
}

/* Our entry in the output pane, again under a heading of ours if another command wrote since. */
static struct pane *
entry(struct tui *t)
{
	struct statement *st = t->stmt;
	struct pane *p = sink(t);

	if (!st->entry_open) {
		char *head = xasprintf("%s  (continued)", st->line);

		pane_output_begin(p, head);
		free(head);
		st->entry_open = true;
	}
	return p;
}

void
statement_yield_output(struct tui *t)
{
	if (statement_running(t) && t->stmt->entry_open) {
		pane_output_end(sink(t), NULL);
		t->stmt->entry_open = false;
	}
}

static void
on_output(void *ctx, const char *text, size_t len)
{
	struct tui *t = ctx;

	pane_output_append(entry(t), text, len);
	t->dirty = true;
}

static void
on_end(void *ctx, int rc, const char *text, size_t len, const char *cause)
{
	struct tui *t = ctx;
	struct pane *p = entry(t);

	if (len > 0)
		pane_output_append(p, text, len);
	pane_output_end(p, rc != FP_OK ? cause : NULL);
	t->stmt->entry_open = false;
	t->stmt->running = false;
	if (rc == FP_OK)
		tui_status(t, false, "execute: done");
	else
		tui_status(t, true, "%s", cause);
	t->dirty = true;
}

static void
on_error(void *ctx, int status, const char *cause)
{
	struct tui *t = ctx;

	if (!t->exited && !t->quit) {
		pane_output_end(entry(t), cause);
		tui_status(t, true, "execute: %s", cause);
	}
	t->stmt->entry_open = false;
	t->stmt->running = false;
	t->dirty = true;
}

static const struct statement_handler handler = {
	.output = on_output, .end = on_end, .error = on_error,
};

bool
statement_running(const struct tui *t)
{
	return t->stmt != NULL && t->stmt->running;
}

bool
statement_start(struct tui *t, const char *line)
{
	struct statement *st = get(t);
	char *cause = NULL;

	if (st->running) {
		tui_status(t, true, "a statement is running: Esc interrupts it");
		return false;
	}
	if (!runner_is_statement(line)) {
		/* A usage error: the runner says it, before the agent is loaded for nothing. */
		struct sbuf out = { 0 };

		runner_exec(t->runner, line, &out, &cause);
		tui_status(t, true, "%s", cause ? cause : "execute: bad command");
		sbuf_free(&out);
		free(cause);
		return false;
	}
	if (!inside_attach(t, true, false))
		return false;
	st->relay = (struct runner_statement){ .h = &handler, .ctx = t };
	if (runner_start(t->runner, line, &st->relay, &st->id, &cause) != FP_OK) {
		tui_status(t, true, "%s", cause ? cause : "execute: failed");
		free(cause);
		return false;
	}
	st->session = runner_session(t->runner);
	st->running = true;
	st->cancelled = false;
	free(st->line);
	st->line = xstrdup(line);
	pane_output_begin(sink(t), line);
	st->entry_open = true;
	tui_show_pane(t, sink(t), true);
	tui_status(t, false, "running in process %d: Esc interrupts it; other commands go on",
	    (int)t->pid);
	t->dirty = true;
	return true;
}

/*
 * It did not stop after its KeyboardInterrupt (a C call, say): stop
 * waiting for it.  It goes on in its agent worker; its end, when it comes,
 * is dropped; the session and every other request go on.
 */
static void
give_up(struct tui *t)
{
	struct statement *st = t->stmt;
	char *cause = NULL;

	session_forget(st->session, st->id);
	runner_not_stopped("execute", &cause);
	pane_output_end(entry(t), cause);
	tui_status(t, true, "%s", cause);
	free(cause);
	st->entry_open = false;
	st->running = false;
	t->dirty = true;
}

void
statement_cancel(struct tui *t)
{
	struct statement *st = t->stmt;

	if (st == NULL || !st->running)
		return;
	if (st->cancelled) {
		give_up(t);	/* asked twice: not waiting any longer */
		return;
	}
	if (session_cancel(st->session, st->id, NULL) == FP_OK) {
		st->cancelled = true;
		st->cancelled_ns = now_ns();
		tui_status(t, false, "interrupting the statement (KeyboardInterrupt)...");
	}
	t->dirty = true;
}

int
statement_tick(struct tui *t, int *fd)
{
	struct session *s = t->runner != NULL ? runner_session(t->runner) : NULL;
	char *cause = NULL;

	*fd = -1;
	if (s == NULL)
		return -1;
	/* Errors reach the requests' own handlers and later calls: nothing to do here. */
	(void)session_pump(s, &cause);
	free(cause);
	if ((s = runner_session(t->runner)) == NULL)
		return -1;
	*fd = session_fd(s);
	if (statement_running(t) && t->stmt->cancelled &&
	    now_ns() - t->stmt->cancelled_ns > (uint64_t)RUNNER_CANCEL_GRACE_MS * 1000000)
		give_up(t);
	return statement_running(t) ? TURN_MS : -1;
}

void
statement_free(struct tui *t)
{
	/* Closing the session ends the request in the agent; no callback may come. */
	if (statement_running(t) && t->runner != NULL && runner_session(t->runner) == t->stmt->session)
		session_forget(t->stmt->session, t->stmt->id);
	if (t->stmt != NULL)
		free(t->stmt->line);
	free(t->stmt);
	t->stmt = NULL;
}
