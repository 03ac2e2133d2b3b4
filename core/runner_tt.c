/*
 * runner_tt — the `tt` command (time tunnel).  Every mode is one request
 * of the agent's `tt` command, told apart by "action": -t records (a
 * stream of rows until -n, Ctrl-C or disconnect, then the hooks are
 * removed), -i shows a record (-w evaluates an expression on it, -p
 * replays it: streams of one or K events), -l and -s answer a table, -d
 * and -da delete.  The store lives in the target and outlasts the client.
 */
#include "config.h"

#include "core/runner_int.h"

#include <string.h>

#include "core/model.h"
#include "core/render_tt.h"
#include "core/util.h"

struct tt_progress {
	long long events;
	const char *action;
	struct sbuf *out;	/* -i and -p: their records go with the answer */
};

static void
tt_event(struct runner *r, void *ctx, const struct proto_msg *msg)
{
	struct tt_progress *p = ctx;
	struct tt_event e;
	struct sbuf out = { 0 };

	if (msg->type != PROTO_EVENT || !json_is_object(msg->data))
		return;
	tt_event_parse(msg->data, &e);
	if (e.has_row)
		p->events++;
	/* A recording's rows are written as they come; a record shown or
	 * replayed is part of the answer (a front end shows it with it). */
	if (strcmp(p->action, "record") != 0) {
		render_tt_event(p->out, &e);
		tt_event_clear(&e);
		return;
	}
	render_tt_event(&out, &e);
	tt_event_clear(&e);
	if (out.s != NULL)
		runner_write(r, out.s);
	sbuf_free(&out);
}

/* The action and its own arguments, from the mode the user gave. */
static int
tt_args(const struct cmd_request *req, json_t *args, const char **action, char **cause)
{
	int rc;

	if (command_opt(req, "--time-tunnel")) {
		*action = "record";
		if ((rc = runner_add_str(args, "module", command_arg(req, "module"), "tt", cause)) ||
		    (rc = runner_add_str(args, "class", command_arg(req, "class"), "tt", cause)) ||
		    (rc = runner_add_str(args, "method", command_arg(req, "method"), "tt", cause)) ||
		    (rc = runner_add_str(args, "filter", command_opt(req, "--filter"), "tt", cause)) ||
		    (rc = runner_add_str(args, "nested", command_opt(req, "--nested-method"), "tt",
		    cause)))
			return rc;
		if (command_arg(req, "method") == NULL)
			return fail(cause, FP_EUSAGE, "tt: -t needs module [class] method");
		json_object_set_new(args, "limit", json_integer(command_int(req, "--limits")));
		if (command_opt(req, "--store-records"))
			json_object_set_new(args, "store_records",
			    json_integer(command_int(req, "--store-records")));
		if (command_opt(req, "--store-mib"))
			json_object_set_new(args, "store_bytes",
			    json_integer((json_int_t)command_int(req, "--store-mib") << 20));
		return FP_OK;
	}
	if (command_opt(req, "--index")) {
		json_object_set_new(args, "index", json_integer(command_int(req, "--index")));
		if (command_opt(req, "--play") && command_opt(req, "--watch"))
			return fail(cause, FP_EUSAGE, "tt: -p (replay) and -w (evaluate) do not go "
			    "together");
		if (!command_opt(req, "--play") && (command_opt(req, "--replay-times") ||
		    command_opt(req, "--replay-interval")))
			return fail(cause, FP_EUSAGE, "tt: --replay-times and --replay-interval go "
			    "with -p");
		*action = command_opt(req, "--play") ? "replay" : "inspect";
		json_object_set_new(args, "times", json_integer(command_int(req, "--replay-times")));
		json_object_set_new(args, "interval",
		    json_real(command_number(req, "--replay-interval")));
		return runner_add_str(args, "watch", command_opt(req, "--watch"), "tt", cause);
	}
	if (command_opt(req, "--delete")) {
		*action = "delete";
		json_object_set_new(args, "index", json_integer(command_int(req, "--delete")));
		return FP_OK;
	}
	if (command_opt(req, "--delete_all")) {
		*action = "delete_all";
		return FP_OK;
	}
	*action = "list";
	if ((rc = runner_add_str(args, "search", command_opt(req, "--search"), "tt", cause)))
		return rc;
	return runner_add_str(args, "method", command_opt(req, "--method"), "tt", cause);
}

static void
tt_end(struct sbuf *out, const char *action, const struct proto_msg *end)
{
	json_t *d = end->data;
	struct tt_store_info s;
	struct tt_list l;

	if (strcmp(action, "list") == 0) {
		tt_list_parse(d, &l);
		render_tt_list(out, &l);
		tt_list_clear(&l);
		return;
	}
	tt_store_parse(json_object_get(d, "store"), &s);
	if (strcmp(action, "record") == 0) {
		long long dropped = json_integer_value(json_object_get(d, "dropped"));
		long long ferr = json_integer_value(json_object_get(d, "filter_errors"));

		sbuf_addf(out, "tt: recorded %lld call%s; the hooks are removed\n",
		    json_integer_value(json_object_get(d, "recorded")),
		    json_integer_value(json_object_get(d, "recorded")) == 1 ? "" : "s");
		if (dropped > 0)
			sbuf_addf(out, "tt: %lld calls were not recorded: they came faster than they "
			    "could be stored\n", dropped);
		if (ferr > 0)
			sbuf_addf(out, "tt: the filter raised on %lld calls (not recorded)\n", ferr);
		render_tt_store(out, &s);
	} else if (strncmp(action, "delete", 6) == 0) {
		sbuf_addf(out, "tt: deleted %lld record%s; ",
		    json_integer_value(json_object_get(d, "deleted")),
		    json_integer_value(json_object_get(d, "deleted")) == 1 ? "" : "s");
		render_tt_store(out, &s);
	}
}

int
runner_cmd_tt(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct runner *r = ctx;
	struct tt_progress p = { .out = out };
	struct proto_msg end;
	json_t *args = json_object();
	int rc;

	if ((rc = tt_args(req, args, &p.action, cause)) != FP_OK) {
		json_decref(args);
		return rc;
	}
	json_object_set_new(args, "action", json_string(p.action));
	runner_value_options(req, args);
	if ((rc = runner_stream(r, "tt", args, 0, tt_event, &p, &end, cause)) != FP_OK)
		return rc;
	if (end.ok)
		tt_end(out, p.action, &end);
	else if (strcmp(end.kind, "cancelled") == 0 && strcmp(p.action, "record") == 0)
		sbuf_addf(out, "tt: stopped after %lld record%s; the hooks are removed\n", p.events,
		    p.events == 1 ? "" : "s");
	else if (strcmp(end.kind, "cancelled") == 0 && strcmp(p.action, "replay") == 0)
		sbuf_addf(out, "tt: replay stopped after %lld call%s\n", p.events,
		    p.events == 1 ? "" : "s");
	else
		rc = runner_end_failure(&end, "tt", cause);
	proto_msg_clear(&end);
	return rc;
}

int
runner_tt_list(struct runner *r, const char *method, const char *search, struct tt_list *l,
    char **cause)
{
	struct proto_msg end;
	json_t *args = json_object();
	int rc;

	memset(l, 0, sizeof *l);
	json_object_set_new(args, "action", json_string("list"));
	if ((rc = runner_add_str(args, "method", method, "tt", cause)) ||
	    (rc = runner_add_str(args, "search", search, "tt", cause))) {
		json_decref(args);
		return rc;
	}
	if ((rc = runner_call(r, "tt", args, 10000, &end, cause)) != FP_OK)
		return rc;
	if (end.ok)
		tt_list_parse(end.data, l);
	else
		rc = runner_end_failure(&end, "tt", cause);
	proto_msg_clear(&end);
	return rc;
}
