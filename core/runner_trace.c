/*
 * runner_trace — the `trace` command: one streaming request whose events
 * are the traced calls, each with its call tree, printed as they arrive;
 * -n N ends it in the agent, Ctrl-C cancels it, and either way the agent
 * removes its hooks (see inject/agent/trace.c).  A runner_streamer: the
 * TUI runs it in its background (core/runner_bg.c).
 */
#include "config.h"

#include "core/runner_int.h"

#include <string.h>

#include "core/model_trace.h"
#include "core/render_trace.h"
#include "core/termsafe.h"

struct trace_progress {
	long long shown;
};

static void
trace_event(struct runner *r, void *ctx, const struct proto_msg *msg)
{
	struct trace_progress *p = ctx;
	struct trace_record t;
	struct sbuf out = { 0 };

	struct runner_record rec = { .cmd = "trace", .trace = &t };

	if (msg->type != PROTO_EVENT || !json_is_object(msg->data))
		return;
	trace_record_parse(msg->data, &t);
	if (!t.started)
		p->shown++;
	rec.kind = t.started ? RUNNER_RECORD_START : RUNNER_RECORD_ITEM;
	if (!runner_take_record(r, &rec))
		render_trace_record(&out, &t);
	trace_record_clear(&t);
	if (out.s != NULL)
		runner_write(r, out.s);
	sbuf_free(&out);
}

/* The request of `trace`. */
static int
trace_args(struct runner *r, const struct cmd_request *req, json_t **argsp, char **cause)
{
	json_t *args = json_object();
	int rc;

	if ((rc = runner_add_str(args, "module", command_arg(req, "module"), "trace", cause)) ||
	    (rc = runner_add_str(args, "class", command_arg(req, "class"), "trace", cause)) ||
	    (rc = runner_add_str(args, "method", command_arg(req, "method"), "trace", cause)) ||
	    (rc = runner_add_str(args, "filter", command_opt(req, "--filter"), "trace", cause)) ||
	    (rc = runner_add_str(args, "nested", command_opt(req, "--nested-method"), "trace",
	    cause))) {
		json_decref(args);
		return rc;
	}
	json_object_set_new(args, "interval_ms", json_real(command_number(req, "--interval")));
	json_object_set_new(args, "entrance_ms",
	    json_real(command_number(req, "--entrance_time")));
	json_object_set_new(args, "max_depth", json_integer(command_int(req, "--depth")));
	if (command_opt(req, "--c-calls") != NULL)
		json_object_set_new(args, "c_calls", json_true());
	if ((rc = runner_regex_targets(r, req, args, "trace", cause)) != FP_OK) {
		json_decref(args);
		return rc;
	}
	json_object_set_new(args, "limit", json_integer(command_int(req, "--limits")));
	*argsp = args;
	return FP_OK;
}

/* How the trace ended (rc, end: as runner_stream gave them): the last lines, or the failure. */
static int
trace_end(struct runner *r, void *ctx, int rc, const struct proto_msg *end, struct sbuf *out,
    char **cause)
{
	const struct trace_progress *p = ctx;
	long long shown = p->shown;

	if (runner_stream_ended(r, "trace", rc, end, shown) || rc != FP_OK)
		return rc;
	if (shown == 0 && json_is_string(json_object_get(end->data, "filter_error")))
		termsafe_addf(out, "trace: the filter raised %s on the calls it saw: they were not "
		    "traced\n", json_string_value(json_object_get(end->data, "filter_error")));
	if (end->ok) {
		long long dropped = json_integer_value(json_object_get(end->data, "dropped"));

		if (dropped > 0)
			sbuf_addf(out, "trace: %lld traced calls were dropped (they came faster than "
			    "they could be sent)\n", dropped);
	} else if (strcmp(end->kind, "cancelled") == 0) {
		sbuf_addf(out, "trace: stopped after %lld call%s; the hooks are removed\n", shown,
		    shown == 1 ? "" : "s");
	} else {
		rc = runner_end_failure(end, "trace", cause);
	}
	return rc;
}

const struct runner_streamer runner_trace_streamer = {
	.cmd = "trace",
	.progress_size = sizeof(struct trace_progress),
	.args = trace_args,
	.event = trace_event,
	.end = trace_end,
};
