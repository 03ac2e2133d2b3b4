#include "config.h"

#include "core/runner.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/command.h"
#include "core/procfs.h"
#include "core/pystack.h"
#include "core/render.h"
#include "core/source.h"

struct runner {
	pid_t pid;
	struct py_reader *reader;	/* opened on first need */
};

struct runner *
runner_new(pid_t pid)
{
	struct runner *r = xcalloc(1, sizeof *r);

	r->pid = pid;
	return r;
}

void
runner_free(struct runner *r)
{
	if (r == NULL)
		return;
	py_reader_close(r->reader);
	free(r);
}

static int
parse_pid(const char *s, pid_t *pid, char **cause)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v <= 0 || v > 0x3fffffff)
		return fail(cause, FP_EUSAGE, "'%s' is not a process id", s);
	*pid = (pid_t)v;
	return FP_OK;
}

static int
write_file(const char *path, const char *text, char **cause)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return fail(cause, FP_ERR, "cannot write %s: %s", path, strerror(errno));
	fputs(text, f);
	if (fclose(f) != 0)
		return fail(cause, FP_ERR, "cannot write %s: %s", path, strerror(errno));
	return FP_OK;
}

static int
run_stack(struct runner *r, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct py_snapshot_opts opts = { 0 };
	struct py_reader *reader = r->reader, *own = NULL;
	struct py_snapshot *snap = NULL;
	struct source_cache *sc;
	struct sbuf text = { 0 };
	const char *file = command_opt(req, "--filepath");
	char *cmdline;
	pid_t pid = r->pid;
	int rc;

	if (req->nargs == 1 && (rc = parse_pid(req->args[0], &pid, cause)) != FP_OK)
		return rc;
	if (pid <= 0)
		return fail(cause, FP_EUSAGE, "stack: no process given (flight_profiler PID, or stack PID)");
	if (file != NULL && *file == '\0')
		return fail(cause, FP_EUSAGE, "stack: -f needs a file name");
	opts.native = command_opt(req, "--native") != NULL;
	opts.block = command_opt(req, "--block") != NULL;

	if (pid != r->pid || reader == NULL) {
		if ((rc = py_reader_open(pid, &own, cause)) != FP_OK)
			return rc;
		reader = own;
		if (pid == r->pid) {
			r->reader = own;	/* keep it for the next command */
			own = NULL;
		}
	}
	rc = py_reader_snapshot(reader, &opts, &snap, cause);
	if (rc == FP_OK) {
		sc = source_cache_new(pid);
		cmdline = procfs_cmdline(pid);
		render_stack(&text, snap, py_reader_runtime(reader), cmdline, sc);
		free(cmdline);
		source_cache_free(sc);
		py_snapshot_free(snap);
		if (file != NULL) {
			rc = write_file(file, text.s, cause);
			if (rc == FP_OK)
				sbuf_addf(out, "Write stack to %s successfully!\n", file);
		} else {
			sbuf_add(out, text.s);
		}
	}
	sbuf_free(&text);
	py_reader_close(own);
	return rc;
}

int
runner_exec(struct runner *r, const char *line, struct sbuf *out, char **cause)
{
	struct cmd_request *req;
	int rc;

	if ((rc = command_parse(line, &req, cause)) != FP_OK)
		return rc;
	if (req == NULL)
		return FP_OK;
	if (strcmp(req->spec->name, "help") == 0)
		rc = command_help(out, req->nargs ? req->args[0] : NULL, cause);
	else if (strcmp(req->spec->name, "stack") == 0)
		rc = run_stack(r, req, out, cause);
	else
		rc = fail(cause, FP_ERR, "%s: not implemented", req->spec->name);
	command_request_free(req);
	return rc;
}
