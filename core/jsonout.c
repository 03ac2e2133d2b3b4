/*
 * jsonout — --json (see jsonout.h).
 */
#include "config.h"

#include "core/jsonout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/command.h"
#include "core/gilstat_cmd.h"
#include "core/jsonperf.h"
#include "core/jsonrec.h"
#include "core/jsonstream.h"
#include "core/procfs.h"
#include "core/procset.h"
#include "core/pystack.h"
#include "core/source.h"
#include "core/stackset.h"
#include "core/termsafe.h"

/* What the agent answered, and what the code printed meanwhile (execute). */
struct capture {
	json_t *data;
	struct sbuf output;
};

static void
capture_answer(void *ctx, const char *cmd, const struct proto_msg *end)
{
	struct capture *c = ctx;

	(void)cmd;
	json_decref(c->data);
	c->data = json_incref(end->data);
}

static void
capture_write(void *ctx, const char *text, size_t len)
{
	sbuf_addn(&((struct capture *)ctx)->output, text, len);
}

static int
stack_one(pid_t pid, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct py_snapshot_opts opts = { .block = command_opt(req, "--block") != NULL };
	struct py_reader *reader = NULL;
	struct py_snapshot *snap = NULL;
	struct source_cache *sc;
	char *cmdline;
	int rc;

	if ((rc = py_reader_open(pid, &reader, cause)) != FP_OK)
		return rc;
	if ((rc = py_reader_snapshot(reader, &opts, &snap, cause)) == FP_OK) {
		sc = source_cache_new(pid);
		cmdline = procfs_cmdline(pid);
		jsonrec_emit(out, jsonrec_stack(pid, cmdline, snap, sc));
		free(cmdline);
		source_cache_free(sc);
		py_snapshot_free(snap);
	}
	py_reader_close(reader);
	return rc;
}

static int
stack_json(struct runner *r, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	const char *arg = command_arg(req, "pid");
	pid_t pid = arg != NULL ? (pid_t)strtol(arg, NULL, 10) : runner_pid(r);

	if (command_opt(req, "--native") || command_opt(req, "--locals") ||
	    command_opt(req, "--asyncio") || command_opt(req, "--filepath"))
		return fail(cause, FP_EUSAGE, "stack --json: --native, --locals, -a and -f have no "
		    "records yet; --json takes stack [pid] [--block] [--group]");
	if (runner_procset(r) != NULL && arg == NULL)
		return stackset_cmd(runner_procset(r), req, true, out, cause);
	if (command_opt(req, "--group") != NULL)
		return fail(cause, FP_EUSAGE, "stack: --group merges the stacks of a process set: "
		    "flight_profiler PID --tree, --match REGEX or PID,PID,...");
	if (pid <= 0)
		return fail(cause, FP_EUSAGE, "stack: no process given (flight_profiler PID, or stack PID)");
	return stack_one(pid, req, out, cause);
}

static int
answer_json(struct runner *r, const char *name, const char *line, struct sbuf *out, char **cause)
{
	struct capture c = { 0 };
	struct runner_io io = jsonstream_quiet;
	struct sbuf text = { 0 };
	json_t *rec;
	int rc;

	io.write = capture_write;
	io.answer = capture_answer;
	io.ctx = &c;
	runner_set_io(r, &io);
	rc = runner_exec(r, line, &text, cause);
	if (rc == FP_OK && c.data == NULL)
		rc = fail(cause, FP_ERR, "%s: the agent's answer carried no data", name);
	if (rc == FP_OK) {
		rec = jsonrec_new("answer");
		json_object_set_new(rec, "command", json_string(name));
		json_object_set_new(rec, "pid", json_integer(runner_pid(r)));
		json_object_set_new(rec, "data", json_incref(c.data));
		if (c.output.len > 0)
			json_object_set_new(rec, "output", jsonrec_string(c.output.s));
		jsonrec_emit(out, rec);
	}
	/* c is gone after this: the runner keeps no pointer to it. */
	runner_set_io(r, &jsonstream_quiet);
	json_decref(c.data);
	sbuf_free(&c.output);
	sbuf_free(&text);
	return rc;
}

/*
 * --all over a set: one answer record per member, through a runner of its
 * own (as runner_set does), and an "error" record for a member that
 * failed; the others go on. *keep: records were made, print them even
 * when some member failed.
 */
static int
answer_json_each(struct runner *r, const char *name, const char *line, struct sbuf *out,
    bool *keep, char **cause)
{
	struct proc_set set;
	struct proc_thread_stat st;
	struct runner *one;
	size_t i, failed = 0;
	char *why;
	json_t *rec;
	int rc;

	if ((rc = procset_resolve(runner_procset(r), &set, cause)) != FP_OK)
		return rc;
	for (i = 0; i < set.n; i++) {
		bool existed = procfs_thread_stat(set.m[i].pid, set.m[i].pid, &st);

		one = runner_new(set.m[i].pid);
		if (runner_one_shot(r))
			runner_set_one_shot(one);
		why = NULL;
		rc = answer_json(one, name, line, out, &why);
		if ((rc = procfs_explain_failure(set.m[i].pid, existed, rc, &why)) != FP_OK) {
			rec = jsonrec_new("error");
			json_object_set_new(rec, "command", json_string(name));
			json_object_set_new(rec, "pid", json_integer(set.m[i].pid));
			json_object_set_new(rec, "error", jsonrec_string(why ? why : "unknown error"));
			jsonrec_emit(out, rec);
			failed++;
		}
		free(why);
		runner_free(one);
	}
	*keep = true;
	rc = failed == 0 ? FP_OK : fail(cause, FP_ERR, "%s --all: failed in %zu of %zu processes",
	    name, failed, set.n);
	procset_clear(&set);
	return rc;
}

/* Where gilstat on's records go as they come: the terminal (flushed), or out. */
struct live {
	FILE *f;
	struct sbuf *out;
};

static void
live_write(void *ctx, const char *text, size_t len)
{
	struct live *l = ctx;

	if (l->f == NULL) {
		sbuf_addn(l->out, text, len);
		return;
	}
	fwrite(text, 1, len, l->f);
	fflush(l->f);
}

static int
gilstat_json(struct runner *r, const struct cmd_request *req, FILE *live, struct sbuf *out,
    char **cause)
{
	struct live l = { live, out };
	struct runner_io io = jsonstream_quiet;
	struct sbuf text = { 0 };
	int rc;

	io.write = live_write;
	io.ctx = &l;
	runner_set_io(r, &io);
	/* It fails only before its first record: then its one line, as usual. */
	rc = gilstat_on_json(r, req, &text, cause);
	runner_set_io(r, &jsonstream_quiet);
	sbuf_free(&text);
	return rc;
}

/* What --json gives for a command (doc/json.md's "command" record). */
static const char *
json_kind(const struct cmd_spec *spec)
{
	if (strcmp(spec->name, "stack") == 0)
		return "stack";
	if (strcmp(spec->name, "help") == 0)
		return "command";
	if (strcmp(spec->name, "perf") == 0)
		return "perf";
	if (strcmp(spec->name, "gilstat on") == 0)
		return "gilstat";
	if (spec->flags & CMD_JSON_STREAM)
		return "stream";
	if (spec->flags & CMD_JSON_ANSWER)
		return "answer";
	return "refused";
}

static void
help_record(struct sbuf *out, const struct cmd_spec *spec)
{
	json_t *rec = jsonrec_new("command");

	json_object_set_new(rec, "name", json_string(spec->name));
	json_object_set_new(rec, "usage", json_string(spec->usage ? spec->usage : ""));
	json_object_set_new(rec, "summary", json_string(spec->summary ? spec->summary : ""));
	json_object_set_new(rec, "available", json_boolean(!(spec->flags & CMD_PLANNED) &&
	    !(spec->flags & (CMD_TUI | CMD_LINEMODE))));
	json_object_set_new(rec, "json", json_string(json_kind(spec)));
	jsonrec_emit(out, rec);
}

/* help [NAME]: one "command" record per command (a subcommand's own). */
static int
help_json(const struct cmd_request *req, struct sbuf *out, char **cause)
{
	const struct cmd_spec *const *all, *one = NULL;
	size_t i, k, n;

	if (req->nargs > 0 && (one = command_find(req->args[0])) == NULL)
		return fail(cause, FP_EUSAGE, "help: no command '%s'", req->args[0]);
	all = one != NULL ? &one : command_all(&n);
	if (one != NULL)
		n = 1;
	for (i = 0; i < n; i++)
		for (k = 0; k < (all[i]->nsubs ? all[i]->nsubs : 1); k++)
			help_record(out, all[i]->nsubs ? all[i]->subs[k] : all[i]);
	return FP_OK;
}

static int
json_exec(struct runner *r, const char *line, FILE *live, struct sbuf *out, bool *keep,
    char **cause)
{
	struct cmd_request *req;
	struct sbuf takes = { 0 };
	const char *name;
	bool all, answers, streams;
	int rc;

	if ((rc = command_parse(line, &req, cause)) != FP_OK)
		return rc;
	if (req == NULL)
		return fail(cause, FP_EUSAGE, "--json: the command is empty");
	name = req->spec->name;
	if (strcmp(name, "stack") == 0 || strcmp(name, "help") == 0) {
		rc = name[0] == 's' ? stack_json(r, req, out, cause) : help_json(req, out, cause);
		command_request_free(req);
		return rc;
	}
	if (strcmp(name, "perf") == 0 || strcmp(name, "gilstat on") == 0) {
		rc = name[0] == 'p' ? jsonperf_exec(r, req, out, cause) :
		    gilstat_json(r, req, live, out, cause);
		command_request_free(req);
		return rc;
	}
	if (req->spec->flags & CMD_INTERACTIVE) {
		command_request_free(req);
		return fail(cause, FP_EUSAGE, "%s: interactive (it reads lines from the terminal): "
		    "no --json records; run code with execute", name);
	}
	all = command_opt(req, "--all") != NULL;
	answers = (req->spec->flags & CMD_JSON_ANSWER) != 0;
	streams = (req->spec->flags & CMD_JSON_STREAM) != 0;
	command_request_free(req);
	if (streams)
		return jsonstream_exec(r, name, line, live, out, keep, cause);
	if (answers)
		return all && runner_procset(r) != NULL ?
		    answer_json_each(r, name, line, out, keep, cause) :
		    answer_json(r, name, line, out, cause);
	command_names_with(&takes, CMD_JSON_ANSWER);
	sbuf_add(&takes, ", ");
	command_names_with(&takes, CMD_JSON_STREAM);
	rc = fail(cause, FP_EUSAGE, "%s: no --json records (--json takes stack, perf, "
	    "gilstat on, help, %s)", name, takes.s);
	sbuf_free(&takes);
	return rc;
}

int
jsonout_exec(struct runner *r, const char *line, struct sbuf *out, char **cause)
{
	bool keep = false;

	return json_exec(r, line, NULL, out, &keep, cause);
}

int
jsonout_main(struct runner *r, const char *line)
{
	struct sbuf out = { 0 };
	char *cause = NULL;
	bool keep = false;
	int rc;

	/* Streaming commands write their records as they come. */
	rc = json_exec(r, line, stdout, &out, &keep, &cause);
	/* Records only when the whole command succeeded, never a part of them;
	 * but a member's failure over a set is a record of its own. */
	if (rc == FP_OK || keep)
		fwrite(out.s != NULL ? out.s : "", 1, out.len, stdout);
	else
		termsafe_error(stderr, cause);
	fflush(stdout);
	free(cause);
	sbuf_free(&out);
	return rc;
}
