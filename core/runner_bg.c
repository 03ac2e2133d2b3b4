/*
 * runner_bg — the streaming commands (watch, trace, monitor) waited for or in the
 * background: one runner_streamer each (its request, its events, its end,
 * named by the command's table entry),
 * run by runner_stream_run inside runner_exec, or started here on the
 * session with handlers so that the front end's one loop dispatches its
 * events and end while everything else goes on.  Nothing here waits for
 * the agent once the request is sent.
 */
#include "config.h"

#include "core/runner_int.h"

#include <stdlib.h>
#include <string.h>

#include "core/procfs.h"
#include "core/session.h"
#include "core/util.h"

struct runner_bg {
	struct runner *r;
	const struct runner_streamer *st;
	void *progress;
	const struct runner_bg_handler *h;
	void *ctx;
	struct session *s;	/* the one it was started on */
	uint64_t id;
	pid_t pid;
	bool existed;		/* the process was there when it started */
};

int
runner_stream_run(struct runner *r, const struct runner_streamer *st,
    const struct cmd_request *req, struct sbuf *out, char **cause)
{
	void *progress = xcalloc(1, st->progress_size);
	struct proto_msg end;
	json_t *args = NULL;
	int rc;

	if ((rc = st->args(r, req, &args, cause)) == FP_OK) {
		rc = runner_stream(r, st->cmd, args, 0, st->event, progress, &end, cause);
		rc = st->end(r, progress, rc, &end, out, cause);
		proto_msg_clear(&end);
	}
	free(progress);
	return rc;
}

int
runner_cmd_stream(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	return runner_stream_run(ctx, req->spec->streamer, req, out, cause);
}

bool
runner_is_background(const struct runner *r, const char *line)
{
	struct cmd_request *req = NULL;
	bool yes;

	if (runner_procset(r) != NULL || command_parse(line, &req, NULL) != FP_OK || req == NULL)
		return false;
	yes = req->spec->streamer != NULL && command_unavailable(req->spec, NULL) == FP_OK;
	command_request_free(req);
	return yes;
}

static void
bg_free(struct runner_bg *bg)
{
	free(bg->progress);
	free(bg);
}

/* Its end (rc, end as runner_stream gives them) to the front end; bg is freed. */
static void
bg_finish(struct runner_bg *bg, int rc, const struct proto_msg *end, char *cause)
{
	struct sbuf out = { 0 };

	rc = bg->st->end(bg->r, bg->progress, rc, end, &out, &cause);
	rc = procfs_explain_failure(bg->pid, bg->existed, rc, &cause);
	bg->h->end(bg->ctx, rc, out.s != NULL ? out.s : "", rc != FP_OK ? cause : NULL);
	sbuf_free(&out);
	free(cause);
	bg_free(bg);
}

static void
bg_event(void *ctx, uint64_t id, json_t *data)
{
	struct runner_bg *bg = ctx;
	struct proto_msg msg = { .type = PROTO_EVENT, .id = id, .data = data };

	runner_seen(bg->r, bg->st->cmd, &msg);
	bg->st->event(bg->r, bg->progress, &msg);
}

static void
bg_end(void *ctx, uint64_t id, const struct proto_msg *end)
{
	struct runner_bg *bg = ctx;

	(void)id;
	runner_seen(bg->r, bg->st->cmd, end);
	bg_finish(bg, FP_OK, end, NULL);
}

static void
bg_error(void *ctx, uint64_t id, int status, const char *cause)
{
	struct runner_bg *bg = ctx;
	struct proto_msg none = { 0 };

	(void)id;
	bg_finish(bg, status, &none,
	    xstrdup(cause != NULL ? cause : "the connection to the agent failed"));
}

static const struct session_handler bg_relay = {
	.event = bg_event, .end = bg_end, .error = bg_error,
};

int
runner_bg_start(struct runner *r, const char *line, const struct runner_bg_handler *h,
    void *ctx, struct runner_bg **bgp, char **cause)
{
	struct cmd_request *req = NULL;
	struct proc_thread_stat pst;
	struct runner_bg *bg;
	json_t *args = NULL;
	int rc;

	*bgp = NULL;
	if ((rc = command_parse(line, &req, cause)) != FP_OK)
		return rc;
	if (req == NULL || req->spec->streamer == NULL) {
		command_request_free(req);
		return fail(cause, FP_EUSAGE, "only streaming commands run in the background");
	}
	bg = xcalloc(1, sizeof *bg);
	*bg = (struct runner_bg){ .r = r, .st = req->spec->streamer, .h = h, .ctx = ctx,
	    .pid = runner_pid(r) };
	bg->existed = bg->pid > 0 && procfs_thread_stat(bg->pid, bg->pid, &pst);
	bg->progress = xcalloc(1, bg->st->progress_size);
	rc = bg->st->args(r, req, &args, cause);
	command_request_free(req);
	if (rc == FP_OK && (rc = runner_agent(r, ATTACH_LOAD, &bg->s, cause)) != FP_OK)
		json_decref(args);
	else if (rc == FP_OK && (rc = session_start(bg->s, bg->st->cmd, args, &bg_relay, bg,
	    &bg->id, cause)) != FP_OK)
		runner_agent_failed(r, rc);
	if (rc != FP_OK) {
		rc = procfs_explain_failure(bg->pid, bg->existed, rc, cause);
		bg_free(bg);
		return rc;
	}
	*bgp = bg;
	return FP_OK;
}

int
runner_bg_cancel(struct runner_bg *bg, char **cause)
{
	return session_cancel(bg->s, bg->id, cause);
}

void
runner_bg_forget(struct runner_bg *bg)
{
	if (bg == NULL)
		return;
	session_forget(bg->s, bg->id);
	bg_free(bg);
}

void
runner_bg_give_up(struct runner_bg *bg)
{
	struct proto_msg none = { 0 };
	char *cause = NULL;
	/* What is true (tests/tui/tuitest.py's watch_give_up): the agent got the
	 * cancel and honours it once the target lets it run, attached or not. */
	int rc = fail(&cause, FP_ERR, "%s: the agent did not confirm the stop within %d s (the "
	    "target may hold the GIL); it removes the hooks when it can run, at the latest when "
	    "flight_profiler leaves", bg->st->cmd, RUNNER_CANCEL_GRACE_MS / 1000);

	session_forget(bg->s, bg->id);
	bg_finish(bg, rc, &none, cause);
}
