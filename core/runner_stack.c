/*
 * runner_stack — `stack`: the outside read of one process (with the
 * agent's thread names, locals or asyncio tasks when it is there or asked
 * for), or of the runner's process set (core/stackset).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/attach.h"
#include "core/procfs.h"
#include "core/pystack.h"
#include "core/render.h"
#include "core/render_agent.h"
#include "core/runner_int.h"
#include "core/session.h"
#include "core/source.h"
#include "core/stackset.h"

/* How long the agent may take for locals or tasks; for names alone, never worth waiting long. */
#define VALUE_TIMEOUT_MS 10000
#define NAMES_TIMEOUT_MS 300

/*
 * The agent's view of the threads (names; locals and asyncio tasks when
 * asked).  With neither asked, only an agent already running is used and
 * only briefly: a plain `stack` must stay an outside read.
 */
static int
agent_threads(struct runner *r, pid_t pid, bool locals, bool asyncio,
    struct agent_threads **threads, char **cause)
{
	struct session *s = NULL, *own = NULL;
	struct proto_msg end;
	json_t *args;
	bool deep = locals || asyncio;
	int rc;

	*threads = NULL;
	if (pid == runner_pid(r)) {
		rc = runner_agent(r, deep ? ATTACH_LOAD : ATTACH_EXISTING, &s, cause);
	} else {
		rc = attach_agent(pid, deep ? ATTACH_LOAD : ATTACH_EXISTING, 0, &own, cause);
		s = own;
	}
	if (rc != FP_OK)
		return rc;
	args = agent_threads_args(locals, asyncio, 200);
	rc = session_call(s, "threads", args, deep ? VALUE_TIMEOUT_MS : NAMES_TIMEOUT_MS, NULL,
	    NULL, &end, cause);
	if (rc == FP_OK && end.ok) {
		*threads = agent_threads_from_end(&end);
	} else if (rc == FP_OK) {
		rc = runner_end_failure(&end, "stack", cause);
	}
	proto_msg_clear(&end);
	if (own != NULL)
		session_close(own);
	else if (rc != FP_OK)
		runner_agent_failed(r, rc);
	return rc;
}

/*
 * FP_STACK_STATS=1, for benchmarks only: one line on stderr per `stack`
 * saying how many thread reads were torn and read again, how many were
 * read with the thread stopped after every try was torn, and how many
 * stayed partial.
 */
static void
stack_stats(const struct py_snapshot *snap)
{
	unsigned retries = 0, stopped = 0, partial = 0;
	size_t i;

	if (getenv("FP_STACK_STATS") == NULL)
		return;
	for (i = 0; i < snap->nthreads; i++) {
		retries += snap->threads[i].retries;
		stopped += snap->threads[i].stopped_read;
		partial += snap->threads[i].partial;
	}
	fprintf(stderr, "stack-stats: threads %zu retries %u stopped %u partial %u\n",
	    snap->nthreads, retries, stopped, partial);
}

/* stack over the runner's process set (core/stackset). */
static int
stack_over_set(struct runner *r, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	const char *file = command_opt(req, "--filepath");
	struct sbuf text = { 0 };
	int rc;

	if (file != NULL && *file == '\0')
		return fail(cause, FP_EUSAGE, "stack: -f needs a file name");
	rc = stackset_cmd(runner_procset(r), req, false, &text, cause);
	if (rc == FP_OK && file != NULL) {
		rc = runner_write_file(file, text.s ? text.s : "", cause);
		if (rc == FP_OK)
			sbuf_addf(out, "Write stack to %s successfully!\n", file);
	} else if (rc == FP_OK) {
		sbuf_add(out, text.s ? text.s : "");
	}
	sbuf_free(&text);
	return rc;
}

int
runner_cmd_stack(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct runner *r = ctx;
	struct py_snapshot_opts opts = { 0 };
	struct py_reader *reader = runner_reader(r), *own = NULL;
	struct py_snapshot *snap = NULL;
	struct source_cache *sc;
	struct sbuf text = { 0 };
	const char *file = command_opt(req, "--filepath");
	bool locals = command_opt(req, "--locals") != NULL;
	bool asyncio = command_opt(req, "--asyncio") != NULL;
	struct agent_threads *threads = NULL;
	char *cmdline, *why = NULL;
	pid_t pid = runner_pid(r);
	int rc, arc = FP_OK;

	if (runner_procset(r) != NULL && runner_named_pid(req, 0) <= 0)
		return stack_over_set(r, req, out, cause);
	if (command_opt(req, "--group") != NULL)
		return fail(cause, FP_EUSAGE, "stack: --group merges the stacks of a process set: "
		    "flight_profiler PID --tree, --match REGEX or PID,PID,...");
	pid = runner_named_pid(req, pid);
	if (pid <= 0)
		return fail(cause, FP_EUSAGE, "stack: no process given (flight_profiler PID, or stack PID)");
	if (file != NULL && *file == '\0')
		return fail(cause, FP_EUSAGE, "stack: -f needs a file name");
	opts.native = command_opt(req, "--native") != NULL;
	opts.block = command_opt(req, "--block") != NULL;

	if (pid != runner_pid(r) || reader == NULL) {
		if ((rc = py_reader_open(pid, &own, cause)) != FP_OK)
			return rc;
		reader = own;
		if (pid == runner_pid(r)) {
			runner_keep_reader(r, own);	/* for the next command */
			own = NULL;
		}
	}
	rc = py_reader_snapshot(reader, &opts, &snap, cause);
	if (rc == FP_OK) {
		stack_stats(snap);
		/* The inside view adds to the outside one; without it, the outside one stands. */
		arc = agent_threads(r, pid, locals, asyncio, &threads, &why);
		if (threads != NULL)
			render_apply_thread_names(snap, threads);
		sc = source_cache_new(pid);
		cmdline = procfs_cmdline(pid);
		if (locals && threads != NULL)
			render_stack_locals(&text, snap, py_reader_runtime(reader), cmdline, sc, threads);
		else
			render_stack(&text, snap, py_reader_runtime(reader), cmdline, sc);
		if (asyncio && threads != NULL)
			render_asyncio(&text, snap, threads);
		free(cmdline);
		source_cache_free(sc);
		py_snapshot_free(snap);
		if (file != NULL) {
			rc = runner_write_file(file, text.s, cause);
			if (rc == FP_OK)
				sbuf_addf(out, "Write stack to %s successfully!\n", file);
		} else {
			sbuf_add(out, text.s);
		}
		if (rc == FP_OK && (locals || asyncio) && arc != FP_OK)
			rc = fail(cause, arc, "stack: %s%s%s unavailable: %s", locals ? "locals" : "",
			    locals && asyncio ? " and " : "", asyncio ? "asyncio tasks" : "",
			    why ? why : "no agent");
	}
	agent_threads_free(threads);
	free(why);
	sbuf_free(&text);
	py_reader_close(own);
	return rc;
}
