/*
 * runner_trace — the `trace` command: one streaming request whose events
 * are the traced calls, each with its call tree, printed as they arrive;
 * -n N ends it in the agent, Ctrl-C cancels it, and either way the agent
 * removes its hooks (see inject/agent/trace.c).
 */
#include "config.h"

#include "core/runner_int.h"

#include <string.h>

#include "core/model_trace.h"
#include "core/render_trace.h"
#include "core/termsafe.h"
#include "core/util.h"

static void
trace_event(struct runner *r, void *ctx, const struct proto_msg *msg)
{
	long long *shown = ctx;
	struct trace_record t;
	struct sbuf out = { 0 };

	struct runner_record rec = { .cmd = "trace", .trace = &t };

	if (msg->type != PROTO_EVENT || !json_is_object(msg->data))
		return;
	trace_record_parse(msg->data, &t);
	if (!t.started)
		(*shown)++;
	rec.kind = t.started ? RUNNER_RECORD_START : RUNNER_RECORD_ITEM;
	if (!runner_take_record(r, &rec))
		render_trace_record(&out, &t);
	trace_record_clear(&t);
	if (out.s != NULL)
		runner_write(r, out.s);
	sbuf_free(&out);
}

int
runner_cmd_trace(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct runner *r = ctx;
	long long shown = 0;
	struct proto_msg end;
	json_t *args;
	int rc;

	args = json_object();
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
	if ((rc = runner_regex_targets(r, req, args, "trace", cause)) != FP_OK) {
		json_decref(args);
		return rc;
	}
	json_object_set_new(args, "limit", json_integer(command_int(req, "--limits")));
	if ((rc = runner_stream(r, "trace", args, 0, trace_event, &shown, &end, cause)) != FP_OK)
		return rc;
	if (end.ok || strcmp(end.kind, "cancelled") == 0) {
		struct runner_record rec = {
			.cmd = "trace", .kind = RUNNER_RECORD_END, .shown = shown,
			.dropped = json_integer_value(json_object_get(end.data, "dropped")),
			.cancelled = !end.ok,
		};

		if (runner_take_record(r, &rec)) {
			proto_msg_clear(&end);
			return FP_OK;
		}
	}
	if (shown == 0 && json_is_string(json_object_get(end.data, "filter_error")))
		termsafe_addf(out, "trace: the filter raised %s on the calls it saw: they were not "
		    "traced\n", json_string_value(json_object_get(end.data, "filter_error")));
	if (end.ok) {
		long long dropped = json_integer_value(json_object_get(end.data, "dropped"));

		if (dropped > 0)
			sbuf_addf(out, "trace: %lld traced calls were dropped (they came faster than "
			    "they could be sent)\n", dropped);
	} else if (strcmp(end.kind, "cancelled") == 0) {
		sbuf_addf(out, "trace: stopped after %lld call%s; the hooks are removed\n", shown,
		    shown == 1 ? "" : "s");
	} else {
		rc = runner_end_failure(&end, "trace", cause);
	}
	proto_msg_clear(&end);
	return rc;
}
