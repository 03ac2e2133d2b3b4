/*
 * runner_mem — the `mem` commands: the request to the agent, the answer
 * into its model (core/model.h) and its plain text (core/render_mem).
 */
#include "config.h"

#include "core/runner_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/render_mem.h"
#include "core/util.h"

/* A scan of millions of objects, in slices: generous, it is not a hang. */
#define SCAN_TIMEOUT_MS 120000

static bool
target_gone(pid_t pid)
{
	return kill(pid, 0) != 0 && errno == ESRCH;
}

static void
show_table(struct sbuf *out, json_t *data)
{
	struct mem_table *t = mem_table_parse(data);

	render_mem_table(out, t);
	mem_table_free(t);
}

static void
show_sites(struct sbuf *out, json_t *data)
{
	struct mem_sites *m = mem_sites_parse(data);

	render_mem_sites(out, m);
	mem_sites_free(m);
}

static void
show_rss(struct sbuf *out, json_t *data)
{
	struct mem_rss m;

	mem_rss_parse(data, &m);
	render_mem_rss(out, &m);
}

/* Send one `mem` request (steals args) and show its answer with `show`. */
static int
mem_request(struct runner *r, const char *name, json_t *args, int timeout_ms,
    void (*show)(struct sbuf *, json_t *), struct sbuf *out, char **cause)
{
	struct proto_msg end;
	int rc;

	rc = runner_call(r, "mem", args, timeout_ms, &end, cause);
	if (rc != FP_OK) {
		if (target_gone(runner_pid(r))) {
			free(*cause);
			return fail(cause, FP_ERR, "%s: process %d exited before the answer came "
			    "(nothing to compare)", name, (int)runner_pid(r));
		}
		return rc;
	}
	if (end.ok)
		show(out, end.data);
	else
		rc = runner_end_failure(&end, name, cause);
	proto_msg_clear(&end);
	return rc;
}

static json_t *
table_args(const struct cmd_request *req, const char *action)
{
	return json_pack("{s:s,s:i,s:s}", "action", action,
	    "limit", (int)command_int(req, "--limit"), "order", command_value(req, "--order"));
}

int
runner_cmd_mem_summary(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	return mem_request(ctx, "mem summary", table_args(req, "summary"), SCAN_TIMEOUT_MS,
	    show_table, out, cause);
}

int
runner_cmd_mem_diff(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	double interval = command_number(req, "--interval");
	json_t *args = table_args(req, "diff");

	json_object_set_new(args, "interval", json_real(interval));
	return mem_request(ctx, "mem diff", args, (int)(interval * 1000) + 2 * SCAN_TIMEOUT_MS,
	    show_table, out, cause);
}

int
runner_cmd_mem_sites(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	json_t *args = json_pack("{s:s,s:s,s:i,s:i}", "action", "sites", "what", req->args[0],
	    "frames", (int)command_int(req, "--frames"), "limit", 20);
	double interval = command_number(req, "--interval");
	char name[32];

	snprintf(name, sizeof name, "mem sites %s", req->args[0]);
	if (interval > 0 && strcmp(req->args[0], "diff") != 0) {
		json_decref(args);
		return fail(cause, FP_EUSAGE, "%s: --interval goes with diff", name);
	}
	if (interval <= 0 && runner_one_shot(ctx)) {
		json_decref(args);
		return fail(cause, FP_EUSAGE, "%s: tracemalloc ends with the client that started "
		    "it, and --cmd leaves at once: use `mem sites diff -i SECONDS` (start, wait, diff, "
		    "stop in one command), or the TUI or line mode (commands on standard input)", name);
	}
	if (interval > 0)
		json_object_set_new(args, "interval", json_real(interval));
	return mem_request(ctx, name, args, (int)(interval * 1000) + SCAN_TIMEOUT_MS, show_sites,
	    out, cause);
}

int
runner_cmd_mem_rss(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	(void)req;
	return mem_request(ctx, "mem rss", json_pack("{s:s}", "action", "rss"), SCAN_TIMEOUT_MS,
	    show_rss, out, cause);
}
