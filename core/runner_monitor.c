/*
 * runner_monitor — `monitor` and `reset`.  monitor is one streaming
 * request whose events are rows per cycle (core/model_monitor.h), printed
 * as they arrive; -n N ends it in the agent, Ctrl-C cancels it, `reset`
 * (from this client, or `reset --all` from any) removes it, and either way
 * the agent stops observing.
 */
#include "config.h"

#include "core/runner_int.h"

#include <string.h>

#include "core/model_monitor.h"
#include "core/termsafe.h"

struct monitor_progress {
	long long cycles;
	long long header_cycle;	/* the cycle whose rows came under the last header */
};

static void
monitor_event(struct runner *r, void *ctx, const struct proto_msg *msg)
{
	struct monitor_progress *p = ctx;
	struct monitor_row m;
	struct runner_record rec = { .cmd = "monitor", .monitor = &m };
	struct sbuf out = { 0 };
	bool header;

	if (msg->type != PROTO_EVENT || !json_is_object(msg->data))
		return;
	monitor_row_parse(msg->data, &m);
	if (!m.started && m.cycle > p->cycles)
		p->cycles = m.cycle;
	rec.kind = m.started ? RUNNER_RECORD_START : RUNNER_RECORD_ITEM;
	if (runner_take_record(r, &rec)) {
		monitor_row_clear(&m);
		return;
	}
	/* A header over the first cycle's rows, and again every 20 cycles. */
	header = !m.started && m.cycle != p->header_cycle && (m.cycle - 1) % 20 == 0;
	if (header)
		p->header_cycle = m.cycle;
	monitor_row_render(&out, &m, header);
	monitor_row_clear(&m);
	if (out.s != NULL)
		runner_write(r, out.s);
	sbuf_free(&out);
}

/* The request of `monitor`. */
static int
monitor_args(struct runner *r, const struct cmd_request *req, json_t **argsp, char **cause)
{
	json_t *args = json_object();
	const char *limit = command_opt(req, "--limits");
	int rc;

	if ((rc = runner_add_str(args, "module", command_arg(req, "module"), "monitor", cause)) ||
	    (rc = runner_add_str(args, "class", command_arg(req, "class"), "monitor", cause)) ||
	    (rc = runner_add_str(args, "method", command_arg(req, "method"), "monitor", cause)) ||
	    (rc = runner_regex_targets(r, req, args, "monitor", cause))) {
		json_decref(args);
		return rc;
	}
	json_object_set_new(args, "cycle", json_real(command_number(req, "--cycle")));
	if (limit != NULL)
		json_object_set_new(args, "limit", json_integer(command_int(req, "--limits")));
	*argsp = args;
	return FP_OK;
}

/* How the monitor ended (rc, end: as runner_stream gave them). */
static int
monitor_end(struct runner *r, void *ctx, int rc, const struct proto_msg *end, struct sbuf *out,
    char **cause)
{
	const struct monitor_progress *p = ctx;

	if (runner_stream_ended(r, "monitor", rc, end, p->cycles) || rc != FP_OK)
		return rc;
	if (end->ok && json_is_true(json_object_get(end->data, "reset")))
		sbuf_addf(out, "monitor: removed by reset after %lld cycle%s\n", p->cycles,
		    p->cycles == 1 ? "" : "s");
	else if (!end->ok && strcmp(end->kind, "cancelled") == 0)
		sbuf_addf(out, "monitor: stopped after %lld cycle%s; the hooks are removed\n",
		    p->cycles, p->cycles == 1 ? "" : "s");
	else if (!end->ok)
		rc = runner_end_failure(end, "monitor", cause);
	return rc;
}

const struct runner_streamer runner_monitor_streamer = {
	.cmd = "monitor",
	.progress_size = sizeof(struct monitor_progress),
	.args = monitor_args,
	.event = monitor_event,
	.end = monitor_end,
};

int
runner_cmd_reset(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct runner *r = ctx;
	struct proto_msg end;
	struct session *s;
	json_t *args, *removed, *v;
	size_t i;
	int rc;

	/* No agent, nothing observed: reset never loads one to say so. */
	if ((rc = runner_agent(r, ATTACH_IF_RUNNING, &s, cause)) != FP_OK)
		return rc;
	if (s == NULL) {
		/* The answer an agent with nothing observed gives, and why. */
		memset(&end, 0, sizeof end);
		end.type = PROTO_END;
		end.ok = true;
		end.data = end.root = json_pack("{s:[],s:b}", "removed", "agent", 0);
		runner_answer(r, "reset", &end);
		proto_msg_clear(&end);
		sbuf_addf(out, "reset: nothing was observed (no agent runs in process %d)\n",
		    (int)runner_pid(r));
		return FP_OK;
	}
	args = json_object();
	json_object_set_new(args, "all", json_boolean(command_opt(req, "--all") != NULL));
	if ((rc = runner_call(r, "reset", args, 30000, &end, cause)) != FP_OK)
		return rc;
	if (!end.ok) {
		rc = runner_end_failure(&end, "reset", cause);
		proto_msg_clear(&end);
		return rc;
	}
	removed = json_object_get(end.data, "removed");
	if (json_array_size(removed) == 0)
		sbuf_add(out, "reset: nothing was observed\n");
	else
		sbuf_addf(out, "reset: removed %zu instrumentation%s:\n", json_array_size(removed),
		    json_array_size(removed) == 1 ? "" : "s");
	json_array_foreach(removed, i, v)
		if (json_is_string(v))
			termsafe_addf(out, "  %s\n", json_string_value(v));
	proto_msg_clear(&end);
	return FP_OK;
}
