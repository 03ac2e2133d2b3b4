/*
 * runner_watch — the `watch` command: one streaming request whose events
 * are the observed calls, printed as they arrive; -n N ends it in the
 * agent, Ctrl-C cancels it, and either way the agent removes its hooks.
 */
#include "config.h"

#include "core/runner_int.h"

#include <string.h>

#include "core/model.h"
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
	struct sbuf out = { 0 };

	if (msg->type != PROTO_EVENT || !json_is_object(msg->data))
		return;
	watch_record_parse(msg->data, &w);
	if (!w.started)
		p->shown++;
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
runner_cmd_watch(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct runner *r = ctx;
	struct watch_progress p = { 0 };
	struct proto_msg end;
	json_t *args;
	int rc;

	(void)out;	/* records are written as they come, not at the end */
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
	if ((rc = runner_stream(r, "watch", args, 0, watch_event, &p, &end, cause)) != FP_OK)
		return rc;
	if (end.ok) {
		long long dropped = json_integer_value(json_object_get(end.data, "dropped"));

		if (dropped > 0)
			sbuf_addf(out, "watch: %lld calls were dropped (they came faster than they "
			    "could be formatted)\n", dropped);
	} else if (strcmp(end.kind, "cancelled") == 0) {
		sbuf_addf(out, "watch: stopped after %lld call%s; the hooks are removed\n", p.shown,
		    p.shown == 1 ? "" : "s");
	} else {
		rc = runner_end_failure(&end, "watch", cause);
	}
	proto_msg_clear(&end);
	return rc;
}
