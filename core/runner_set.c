/*
 * runner_set — a command with --all in every member of the runner's
 * process set.  Members run one after another, never at once: loading the
 * agent stops the process it loads into, and a job whose every worker is
 * stopped together is the job at its most fragile; one at a time, the
 * others run on.
 */
#include "config.h"

#include "core/runner_set.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/perfset.h"
#include "core/procfs.h"
#include "core/procset.h"
#include "core/runner_int.h"
#include "core/termsafe.h"

/* What a member's code prints while it runs (execute) goes out at once, under its header. */
static void
member_write(void *ctx, const char *text, size_t len)
{
	char *s = xmalloc(len + 1);

	memcpy(s, text, len);
	s[len] = '\0';
	runner_write(ctx, s);
	free(s);
}

/* No command that runs over a set reads lines (console does not). */
static char *
member_read_line(void *ctx, const char *prompt, bool *interrupted)
{
	(void)ctx;
	(void)prompt;
	*interrupted = false;
	return NULL;
}

static int
refuse(const struct cmd_spec *spec, char **cause)
{
	struct sbuf set = { 0 }, all = { 0 };
	int rc;

	if (spec->flags & CMD_SET_ALL)
		return fail(cause, FP_EUSAGE, "%s: over a process set, add --all to run it in every "
		    "member (or give one pid)", spec->name);
	command_names_with(&set, CMD_SET);
	command_names_with(&all, CMD_SET_ALL);
	rc = fail(cause, FP_EUSAGE, "%s: does not run over a process set (%s do, and with --all "
	    "%s); give one pid", spec->name, set.s ? set.s : "", all.s ? all.s : "");
	sbuf_free(&set);
	sbuf_free(&all);
	return rc;
}

/*
 * The command in one member, through a runner of its own (attached, and
 * its session closed, as for flight_profiler PID); its section goes out
 * as it comes.  Returns the member's status.
 */
static int
run_member(struct runner *r, const struct proc_member *m, const struct cmd_request *req,
    bool first)
{
	const struct runner_io io = {
		.read_line = member_read_line, .write = member_write, .ctx = r,
	};
	struct runner *one = runner_new(m->pid);
	struct proc_thread_stat st;
	bool existed = procfs_thread_stat(m->pid, m->pid, &st);
	char *label = perfset_label(m->pid, m->cmdline), *cause = NULL, *line;
	struct sbuf text = { 0 };
	int rc;

	line = xasprintf("%s== %s ==\n", first ? "" : "\n", label);
	runner_write(r, line);
	free(line);
	runner_set_io(one, &io);
	if (runner_one_shot(r))
		runner_set_one_shot(one);
	rc = req->spec->run(one, req, &text, &cause);
	rc = procfs_explain_failure(m->pid, existed, rc, &cause);
	if (text.len > 0)
		runner_write(r, text.s);
	if (rc != FP_OK) {
		line = xasprintf("failed: %s\n", cause ? cause : "unknown error");
		runner_write(r, line);
		free(line);
	}
	runner_free(one);
	sbuf_free(&text);
	free(label);
	free(cause);
	return rc;
}

int
runner_set_each(struct runner *r, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	const struct cmd_spec *spec = req->spec;
	struct proc_set set;
	size_t i, failed = 0;
	pid_t first_failed = 0;
	int rc;

	if (!(spec->flags & CMD_SET_ALL) || command_opt(req, "--all") == NULL)
		return refuse(spec, cause);
	if ((rc = procset_resolve(runner_procset(r), &set, cause)) != FP_OK)
		return rc;
	for (i = 0; i < set.n; i++) {
		if (run_member(r, &set.m[i], req, i == 0) != FP_OK && failed++ == 0)
			first_failed = set.m[i].pid;
	}
	sbuf_addf(out, "\n%zu process%s: %zu ok", set.n, set.n == 1 ? "" : "es", set.n - failed);
	if (failed > 0)
		sbuf_addf(out, ", %zu failed", failed);
	sbuf_add(out, "\n");
	rc = failed == 0 ? FP_OK : fail(cause, FP_ERR, "%s --all: failed in %zu of %zu processes "
	    "(the first: pid %d)", spec->name, failed, set.n, (int)first_failed);
	procset_clear(&set);
	return rc;
}
