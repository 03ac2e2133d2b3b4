/*
 * runner_watch — the `watch` command: one streaming request whose events
 * are the observed calls, printed as they arrive; -n N ends it in the
 * agent, Ctrl-C cancels it, and either way the agent removes its hooks.
 */
#include "config.h"

#include "core/runner_int.h"

#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/namematch.h"
#include "core/render_agent.h"
#include "core/util.h"

struct watch_progress {
	long long shown;
};

static void
watch_event(struct runner *r, void *ctx, const struct proto_msg *msg)
{
	struct watch_progress *p = ctx;
	struct watch_record w;
	struct runner_record rec = { .cmd = "watch", .watch = &w };
	struct sbuf out = { 0 };

	if (msg->type != PROTO_EVENT || !json_is_object(msg->data))
		return;
	watch_record_parse(msg->data, &w);
	if (!w.started)
		p->shown++;
	rec.kind = w.started ? RUNNER_RECORD_START : RUNNER_RECORD_ITEM;
	if (!runner_take_record(r, &rec))
		render_watch_record(&out, &w);
	watch_record_clear(&w);
	if (out.s != NULL)
		runner_write(r, out.s);
	sbuf_free(&out);
}

static void
watch_flags(const struct cmd_request *req, json_t *args)
{
	static const char *const flags[][2] = {
		{ "--exception", "exception" }, { "--success", "success" },
		{ "--before", "before" }, { "--stack", "stack" }, { "--regex", "regex" },
	};
	size_t i;

	for (i = 0; i < FP_NELEM(flags); i++)
		json_object_set_new(args, flags[i][1],
		    json_boolean(command_opt(req, flags[i][0]) != NULL));
}

int
runner_regex_targets(struct runner *r, const struct cmd_request *req, json_t *args,
    const char *cmd, char **cause)
{
	const char *module = command_arg(req, "module"), *cls = command_arg(req, "class");
	const char *method = command_arg(req, "method");
	struct proto_msg end;
	json_t *q, *targets;
	size_t matched;
	int rc;

	if (command_opt(req, "--regex") == NULL)
		return FP_OK;
	q = json_object();
	if ((rc = runner_add_str(q, "module", module, cmd, cause)) != FP_OK) {
		json_decref(q);
		return rc;
	}
	if ((rc = runner_call(r, "names", q, 30000, &end, cause)) != FP_OK)
		return rc;
	if (!end.ok) {
		rc = runner_end_failure(&end, cmd, cause);
	} else if ((rc = namematch_select(end.data, cls, method, NAMEMATCH_MAX, &targets,
	    &matched, cause)) == FP_OK) {
		if (matched == 0)
			rc = fail(cause, FP_ERR, "%s: no function of module '%s' matches class "
			    "pattern '%s' and method pattern '%s'", cmd, module, cls ? cls : "",
			    method);
		json_object_set_new(args, "targets", targets);
		json_object_set_new(args, "matched", json_integer((json_int_t)matched));
	} else {
		char *m = *cause;

		*cause = xasprintf("%s: %s", cmd, m);
		free(m);
	}
	proto_msg_clear(&end);
	return rc;
}

/*
 * Tell a front end that shows the records itself (runner_io.record) how
 * `cmd` ended; true when it took that, and the end is then said there
 * instead of in the text (a failure's cause still goes back to the caller).
 */
bool
runner_stream_ended(struct runner *r, const char *cmd, int rc, const struct proto_msg *end,
    long long shown)
{
	struct runner_record rec = { .cmd = cmd, .kind = RUNNER_RECORD_END, .shown = shown };

	if (rc == FP_OK) {
		rec.dropped = json_integer_value(json_object_get(end->data, "dropped"));
		rec.cancelled = !end->ok && strcmp(end->kind, "cancelled") == 0;
		rec.failed = !end->ok && !rec.cancelled;
		rec.reset = end->ok && json_is_true(json_object_get(end->data, "reset"));
	} else {
		rec.failed = true;
	}
	return runner_take_record(r, &rec) && rc == FP_OK && !rec.failed;
}

/* The request of `watch` (usage errors first, before the agent is asked anything). */
static int
watch_args(struct runner *r, const struct cmd_request *req, json_t **argsp, char **cause)
{
	json_t *args;
	int rc;

	if (command_opt(req, "--exception") && command_opt(req, "--success"))
		return fail(cause, FP_EUSAGE, "watch: -e (only raising calls) and -s (only "
		    "returning calls) exclude each other");
	if (command_opt(req, "--before") && (command_opt(req, "--exception") ||
	    command_opt(req, "--success")))
		return fail(cause, FP_EUSAGE, "watch: -b observes calls at entry, before their "
		    "outcome is known: it cannot go with -e or -s");
	args = json_object();
	if ((rc = runner_add_str(args, "module", command_arg(req, "module"), "watch", cause)) ||
	    (rc = runner_add_str(args, "class", command_arg(req, "class"), "watch", cause)) ||
	    (rc = runner_add_str(args, "method", command_arg(req, "method"), "watch", cause)) ||
	    (rc = runner_add_str(args, "expr", command_opt(req, "--expr"), "watch", cause)) ||
	    (rc = runner_add_str(args, "filter", command_opt(req, "--filter"), "watch", cause)) ||
	    (rc = runner_add_str(args, "nested", command_opt(req, "--nested-method"), "watch",
	    cause))) {
		json_decref(args);
		return rc;
	}
	runner_value_options(req, args);
	watch_flags(req, args);
	json_object_set_new(args, "limit", json_integer(command_int(req, "--limits")));
	if ((rc = runner_regex_targets(r, req, args, "watch", cause)) != FP_OK) {
		json_decref(args);
		return rc;
	}
	*argsp = args;
	return FP_OK;
}

/* How the watch ended (rc, end: as runner_stream gave them): the last lines, or the failure. */
static int
watch_end(struct runner *r, void *ctx, int rc, const struct proto_msg *end, struct sbuf *out,
    char **cause)
{
	const struct watch_progress *p = ctx;

	if (runner_stream_ended(r, "watch", rc, end, p->shown) || rc != FP_OK)
		return rc;
	if (end->ok) {
		long long dropped = json_integer_value(json_object_get(end->data, "dropped"));

		if (json_is_true(json_object_get(end->data, "reset")))
			sbuf_addf(out, "watch: removed by reset after %lld call%s\n", p->shown,
			    p->shown == 1 ? "" : "s");
		if (dropped > 0)
			sbuf_addf(out, "watch: %lld calls were dropped (they came faster than they "
			    "could be formatted)\n", dropped);
	} else if (strcmp(end->kind, "cancelled") == 0) {
		sbuf_addf(out, "watch: stopped after %lld call%s; the hooks are removed\n", p->shown,
		    p->shown == 1 ? "" : "s");
	} else {
		rc = runner_end_failure(end, "watch", cause);
	}
	return rc;
}

const struct runner_streamer runner_watch_streamer = {
	.cmd = "watch",
	.progress_size = sizeof(struct watch_progress),
	.args = watch_args,
	.event = watch_event,
	.end = watch_end,
};
