#include "config.h"

#include "core/runner.h"
#include "core/runner_int.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/attach.h"
#include "core/command.h"
#include "core/procfs.h"
#include "core/procset.h"
#include "core/runner_set.h"
#include "core/pystack.h"
#include "core/render.h"
#include "core/render_agent.h"
#include "core/session.h"
#include "core/termsafe.h"

/* How long a request may wait for the GIL and run before we give up. */
#define VALUE_TIMEOUT_MS 10000
#define INSTANCES_TIMEOUT_MS 60000
/* After a cancel, how long a statement gets to stop. */
/* How often runner_io.poll is called while a statement runs. */
#define POLL_MS 40

struct runner {
	pid_t pid;
	struct py_reader *reader;	/* opened on first need */
	struct session *agent;		/* connected on first need */
	bool agent_lost;		/* the last session broke */
	bool banner_shown;		/* the console says who it is once */
	bool one_shot;			/* --cmd: the client leaves after one command */
	struct proc_set_spec *set;	/* a process set, or NULL */
	struct runner_io io;
};

static char *default_read_line(void *ctx, const char *prompt, bool *interrupted);
static void default_write(void *ctx, const char *text, size_t len);

pid_t
runner_pid(const struct runner *r)
{
	return r->pid;
}

struct runner *
runner_new(pid_t pid)
{
	struct runner *r = xcalloc(1, sizeof *r);

	r->pid = pid;
	r->io.read_line = default_read_line;
	r->io.write = default_write;
	r->io.interactive = isatty(STDIN_FILENO) != 0;
	return r;
}

void
runner_free(struct runner *r)
{
	if (r == NULL)
		return;
	py_reader_close(r->reader);
	session_close(r->agent);
	if (r->set != NULL)
		procset_spec_clear(r->set);
	free(r->set);
	free(r);
}

void
runner_set_io(struct runner *r, const struct runner_io *io)
{
	r->io = *io;
}

bool
runner_interrupted(struct runner *r)
{
	return r->io.poll != NULL && r->io.poll(r->io.ctx);
}

/* The process a command names (stack PID; the parser checked it), else the attached one. */
pid_t
runner_named_pid(const struct cmd_request *req, pid_t attached)
{
	const char *v = command_arg(req, "pid");

	return v != NULL ? (pid_t)strtol(v, NULL, 10) : attached;
}

int
runner_write_file(const char *path, const char *text, char **cause)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return termsafe_fail(cause, FP_ERR, "cannot write %s: %s", path, strerror(errno));
	fputs(text, f);
	if (fclose(f) != 0)
		return termsafe_fail(cause, FP_ERR, "cannot write %s: %s", path, strerror(errno));
	return FP_OK;
}

/* ---- console and execute I/O, Ctrl-C ------------------------------------- */

static volatile sig_atomic_t got_sigint;

static void
on_sigint(int sig)
{
	got_sigint = 1;
}

/* While code runs in the target, Ctrl-C cancels it instead of leaving. */
static void
sigint_catch(struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: a blocked read returns EINTR */
	got_sigint = 0;
	sigaction(SIGINT, &sa, old);
}

static void
sigint_restore(const struct sigaction *old)
{
	sigaction(SIGINT, old, NULL);
}

static char *
default_read_line(void *ctx, const char *prompt, bool *interrupted)
{
	char *line = NULL;
	size_t alloc = 0;
	ssize_t n;

	*interrupted = false;
	if (isatty(STDIN_FILENO)) {
		fputs(prompt, stdout);
		fflush(stdout);
	}
	errno = 0;
	n = getline(&line, &alloc, stdin);
	if (n < 0) {
		free(line);
		if (errno == EINTR || got_sigint) {
			clearerr(stdin);
			got_sigint = 0;
			*interrupted = true;
			return NULL;
		}
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = '\0';
	return line;
}

static void
default_write(void *ctx, const char *text, size_t len)
{
	termsafe_write(stdout, text, len, TERMSAFE_TEXT);	/* what the target printed */
	fflush(stdout);
}

bool
runner_take_record(struct runner *r, struct runner_record *rec)
{
	return r->io.record != NULL && r->io.record(r->io.ctx, rec);
}

void
runner_write(struct runner *r, const char *text)
{
	r->io.write(r->io.ctx, text, strlen(text));
}

void
runner_seen(struct runner *r, const char *cmd, const struct proto_msg *msg)
{
	if (msg->type == PROTO_EVENT && r->io.event != NULL)
		r->io.event(r->io.ctx, cmd, msg);
	else if (msg->type == PROTO_END && r->io.answer != NULL)
		r->io.answer(r->io.ctx, cmd, msg);
}

/* ---- the agent ----------------------------------------------------------------- */

/* The session with the agent of r->pid, connected (or loaded) on first need. */
int
runner_agent(struct runner *r, enum attach_mode mode, struct session **s, char **cause)
{
	unsigned hex = 0;
	int rc;

	if (r->pid <= 0)
		return fail(cause, FP_EUSAGE, "no process given: flight_profiler PID --cmd ...");
	if (r->agent != NULL) {
		*s = r->agent;
		return FP_OK;
	}
	if (r->reader != NULL)
		hex = py_reader_runtime(r->reader)->version_hex;
	rc = attach_agent(r->pid, mode, hex, &r->agent, cause);
	if (r->agent != NULL)
		r->agent_lost = false;
	*s = r->agent;
	return rc;
}

/* A request failed in a way that may have broken the session: drop it. */
void
runner_agent_failed(struct runner *r, int rc)
{
	if (rc != FP_OK && r->agent != NULL) {
		session_close(r->agent);
		r->agent = NULL;
		r->agent_lost = true;
	}
}

int
runner_attach(struct runner *r, bool load, char **cause)
{
	struct proc_thread_stat st;
	struct session *s;
	bool existed = r->pid > 0 && procfs_thread_stat(r->pid, r->pid, &st);
	int rc = runner_agent(r, load ? ATTACH_LOAD : ATTACH_EXISTING, &s, cause);

	return procfs_explain_failure(r->pid, existed, rc, cause);
}

struct session *
runner_session(struct runner *r)
{
	return r->agent;
}

void
runner_session_failed(struct runner *r)
{
	runner_agent_failed(r, FP_ERR);
}

void
runner_forget_session(struct runner *r)
{
	session_close(r->agent);	/* the child's copy: the parent's socket stays open */
	r->agent = NULL;
}

void
runner_set_procset(struct runner *r, struct proc_set_spec *spec)
{
	r->set = xcalloc(1, sizeof *r->set);
	*r->set = *spec;
	memset(spec, 0, sizeof *spec);
}

struct py_reader *
runner_reader(struct runner *r)
{
	return r->reader;
}

void
runner_keep_reader(struct runner *r, struct py_reader *reader)
{
	r->reader = reader;
}

const struct proc_set_spec *
runner_procset(const struct runner *r)
{
	return r->set;
}

void
runner_set_one_shot(struct runner *r)
{
	r->one_shot = true;
}

bool
runner_one_shot(const struct runner *r)
{
	return r->one_shot;
}

enum runner_agent_state
runner_agent_state(const struct runner *r)
{
	if (r->agent != NULL)
		return RUNNER_AGENT_ATTACHED;
	return r->agent_lost ? RUNNER_AGENT_LOST : RUNNER_AGENT_NONE;
}

/* A JSON string of a command-line word; usage error if it is not UTF-8. */
int
runner_add_str(json_t *args, const char *key, const char *value, const char *cmd, char **cause)
{
	json_t *v;

	if (value == NULL)
		return FP_OK;
	if ((v = json_string(value)) == NULL)
		return termsafe_fail(cause, FP_EUSAGE, "%s: '%s' is not valid UTF-8", cmd, value);
	json_object_set_new(args, key, v);
	return FP_OK;
}

/* -x, -r, -v into the request arguments (the parser checked -x). */
void
runner_value_options(const struct cmd_request *req, json_t *args)
{
	json_object_set_new(args, "depth", json_integer(command_int(req, "--expand")));
	json_object_set_new(args, "raw", json_boolean(command_opt(req, "--raw") != NULL));
	json_object_set_new(args, "verbose", json_boolean(command_opt(req, "--verbose") != NULL));
}

/* The status and message of a failed end. */
int
runner_end_failure(const struct proto_msg *end, const char *cmd, char **cause)
{
	int status = strcmp(end->kind, "usage") == 0 ? FP_EUSAGE : FP_ERR;

	return fail(cause, status, "%s: %s", cmd, end->error);
}

/* Send a request that answers with one end and no events. */
int
runner_call(struct runner *r, const char *cmd, json_t *args, int timeout_ms, struct proto_msg *end,
    char **cause)
{
	struct session *s;
	int rc;

	memset(end, 0, sizeof *end);
	if ((rc = runner_agent(r, ATTACH_LOAD, &s, cause)) != FP_OK) {
		json_decref(args);
		return rc;
	}
	rc = session_call(s, cmd, args, timeout_ms, NULL, NULL, end, cause);
	if (rc != FP_OK && rc != FP_EUSAGE)
		runner_agent_failed(r, rc);
	else if (rc == FP_OK)
		runner_answer(r, cmd, end);
	return rc;
}

void
runner_answer(struct runner *r, const char *cmd, const struct proto_msg *end)
{
	if (r->io.answer != NULL)
		r->io.answer(r->io.ctx, cmd, end);
}

/* ---- getglobal, vmtool, module --------------------------------------------- */

/* The EXPR / TYPE / VALUE block of an answer, through its model. */
static void
value_answer(struct sbuf *out, const struct proto_msg *end)
{
	struct value_block *b = value_block_parse(end->data);

	render_value_block(out, b);
	value_block_free(b);
}

int
runner_cmd_getglobal(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct runner *r = ctx;
	struct proto_msg end;
	json_t *args;
	int rc;

	args = json_object();
	if ((rc = runner_add_str(args, "module", command_arg(req, "module"), "getglobal", cause)) != FP_OK ||
	    (rc = runner_add_str(args, "class", command_arg(req, "class"), "getglobal", cause)) ||
	    (rc = runner_add_str(args, "field", command_arg(req, "field"), "getglobal", cause)) ||
	    (rc = runner_add_str(args, "expr", command_opt(req, "--expr"), "getglobal", cause))) {
		json_decref(args);
		return rc;
	}
	runner_value_options(req, args);
	if ((rc = runner_call(r, "getglobal", args, VALUE_TIMEOUT_MS, &end, cause)) != FP_OK)
		return rc;
	if (end.ok)
		value_answer(out, &end);
	else
		rc = runner_end_failure(&end, "getglobal", cause);
	proto_msg_clear(&end);
	return rc;
}

int
runner_cmd_vmtool(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct runner *r = ctx;
	const char *action = command_opt(req, "--action");
	struct proto_msg end;
	json_t *args;
	int rc;

	/* The table's vmtool_check said what goes with which action. */
	args = json_object();
	if (strcmp(action, "forceGc") == 0) {
		json_object_set_new(args, "action", json_string("forceGc"));
		if ((rc = runner_call(r, "vmtool", args, INSTANCES_TIMEOUT_MS, &end, cause)) != FP_OK)
			return rc;
		if (end.ok)
			sbuf_addf(out, "forceGc: the garbage collector found %lld unreachable object%s "
			    "(%.1f ms)\n", (long long)json_integer_value(json_object_get(end.data, "collected")),
			    json_integer_value(json_object_get(end.data, "collected")) == 1 ? "" : "s",
			    json_real_value(json_object_get(end.data, "ms")));
		else
			rc = runner_end_failure(&end, "vmtool", cause);
		proto_msg_clear(&end);
		return rc;
	}
	json_object_set_new(args, "action", json_string("getInstances"));
	if ((rc = runner_add_str(args, "module", command_arg(req, "module"), "vmtool", cause)) != FP_OK ||
	    (rc = runner_add_str(args, "class", command_arg(req, "class"), "vmtool", cause)) != FP_OK ||
	    (rc = runner_add_str(args, "expr", command_opt(req, "--expr"), "vmtool", cause)) != FP_OK) {
		json_decref(args);
		return rc;
	}
	runner_value_options(req, args);
	json_object_set_new(args, "limit", json_integer(command_int(req, "--limits")));
	if ((rc = runner_call(r, "vmtool", args, INSTANCES_TIMEOUT_MS, &end, cause)) != FP_OK)
		return rc;
	if (end.ok)
		value_answer(out, &end);
	else
		rc = runner_end_failure(&end, "vmtool", cause);
	proto_msg_clear(&end);
	return rc;
}

int
runner_cmd_module(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct runner *r = ctx;
	struct proto_msg end;
	json_t *args, *v;
	size_t i;
	int rc;

	args = json_object();
	if ((rc = runner_add_str(args, "path", req->args[0], "module", cause)) != FP_OK) {
		json_decref(args);
		return rc;
	}
	if ((rc = runner_call(r, "module", args, VALUE_TIMEOUT_MS, &end, cause)) != FP_OK)
		return rc;
	if (end.ok) {
		json_array_foreach(json_object_get(end.data, "modules"), i, v)
			termsafe_addf(out, "%s\n", json_string_value(v));
	} else {
		rc = runner_end_failure(&end, "module", cause);
	}
	proto_msg_clear(&end);
	return rc;
}

/* ---- execute, console -------------------------------------------------------- */

int
runner_not_stopped(const char *cmd, char **cause)
{
	return fail(cause, FP_ERR, "%s: the code did not stop within %d s of "
	    "KeyboardInterrupt (it may be blocked in a C call or catch the interrupt); it "
	    "goes on in an agent worker thread, other requests are not affected", cmd,
	    RUNNER_CANCEL_GRACE_MS / 1000);
}

int
runner_stream(struct runner *r, const char *cmd, json_t *args, long timeout_s,
    runner_event_fn on_event, void *ctx, struct proto_msg *endp, char **cause)
{
	struct sigaction old;
	struct proto_msg msg;
	struct session *s;
	uint64_t id, started = now_ns(), cancelled_at = 0;
	bool given_up = false;
	int rc;

	memset(endp, 0, sizeof *endp);
	if ((rc = runner_agent(r, ATTACH_LOAD, &s, cause)) != FP_OK) {
		json_decref(args);
		return rc;
	}
	if ((rc = session_send(s, cmd, args, &id, cause)) != FP_OK) {
		runner_agent_failed(r, rc);
		return rc;
	}
	sigint_catch(&old);
	for (;;) {
		rc = session_next(s, id, r->io.poll ? POLL_MS : 200, &msg, cause);
		if (rc != FP_OK)
			break;
		if (msg.root != NULL && msg.type == PROTO_END) {
			*endp = msg;
			break;
		}
		if (r->io.poll != NULL && r->io.poll(r->io.ctx))
			got_sigint = 1;
		if (msg.root != NULL) {
			struct output_chunk chunk;

			if (r->io.event != NULL)
				r->io.event(r->io.ctx, cmd, &msg);
			if (on_event != NULL) {
				on_event(r, ctx, &msg);
			} else {
				if (output_chunk_from_msg(&msg, &chunk))
					r->io.write(r->io.ctx, chunk.text, chunk.len);
				output_chunk_clear(&chunk);
			}
			proto_msg_clear(&msg);
			if (!got_sigint)
				continue;
		}
		if (cancelled_at == 0 && (got_sigint ||
		    (timeout_s > 0 && now_ns() - started > (uint64_t)timeout_s * 1000000000))) {
			if ((rc = session_cancel(s, id, cause)) != FP_OK)
				break;
			cancelled_at = now_ns();
			got_sigint = 0;
		} else if (cancelled_at != 0 && now_ns() - cancelled_at > (uint64_t)RUNNER_CANCEL_GRACE_MS * 1000000) {
			rc = runner_not_stopped(cmd, cause);
			given_up = true;
			break;
		} else if (cancelled_at != 0 && got_sigint) {
			rc = fail(cause, FP_ERR, "%s: interrupted twice: not waiting for the code to stop", cmd);
			given_up = true;
			break;
		}
	}
	sigint_restore(&old);
	if (rc == FP_OK && r->io.answer != NULL)
		r->io.answer(r->io.ctx, cmd, endp);
	if (rc != FP_OK && rc != FP_EUSAGE) {
		/* Closing the connection also cancels what it started. */
		runner_agent_failed(r, rc);
		/* The agent itself is fine when we only gave up waiting: connect again. */
		if (given_up && runner_agent(r, ATTACH_EXISTING, &s, NULL) != FP_OK)
			r->agent_lost = true;
	}
	return rc;
}

/* Show a failed statement's traceback; returns the status to report. */
static int
statement_failed(struct runner *r, const struct proto_msg *end, const char *cmd, char **cause)
{
	struct sbuf text = { 0 };
	int rc = runner_statement_end(end, cmd, &text, cause);

	if (text.len > 0)
		runner_write(r, text.s);
	sbuf_free(&text);
	return rc;
}

/*
 * Is the one word of `execute WORD` a script?  st->st_mode is 0 when the
 * word is code.  A word shaped like a path (a slash first, or a .py
 * name) that names no file is an error: as code it would only give a
 * confusing SyntaxError from the target.
 */
static int
script_file(const char *word, struct stat *st, char **cause)
{
	size_t len = strlen(word);
	bool pathlike = word[0] == '/' || strncmp(word, "./", 2) == 0 ||
	    strncmp(word, "../", 3) == 0 || strncmp(word, "~/", 2) == 0 ||
	    (len > 3 && strcmp(word + len - 3, ".py") == 0 && strpbrk(word, " \t()=;'\"") == NULL);

	memset(st, 0, sizeof *st);
	if (stat(word, st) != 0) {
		int e = errno;

		memset(st, 0, sizeof *st);
		if (!pathlike)
			return FP_OK;
		if (e == ENOENT || e == ENOTDIR || e == ENAMETOOLONG)
			return termsafe_fail(cause, FP_EUSAGE, "execute: no such file: %s", word);
		return termsafe_fail(cause, FP_ERR, "execute: cannot read %s: %s", word,
		    strerror(e));
	}
	if (!S_ISREG(st->st_mode)) {
		memset(st, 0, sizeof *st);
		if (pathlike)
			return termsafe_fail(cause, FP_EUSAGE, "execute: %s is not a regular file",
			    word);
	}
	return FP_OK;
}

/* The request of `execute CODE|FILE`: *argsp (new) and *timeout (s, 0: none). */
static int
execute_args(const struct cmd_request *req, json_t **argsp, long *timeout, char **cause)
{
	struct sbuf code = { 0 };
	struct stat st;
	json_t *args;
	char *text = NULL, *abs = NULL;
	size_t i, len;
	int rc;

	*argsp = NULL;
	*timeout = command_int(req, "--timeout");	/* 0: none */
	if (req->nargs == 1 && (rc = script_file(req->args[0], &st, cause)) != FP_OK)
		return rc;
	args = json_object();
	if (req->nargs == 1 && st.st_mode != 0) {
		if (st.st_size > (off_t)(PROTO_MAX_TO_AGENT / 2)) {
			json_decref(args);
			return termsafe_fail(cause, FP_EUSAGE, "execute: %s is too large to send (%lld bytes; at "
			    "most %zu)", req->args[0], (long long)st.st_size, PROTO_MAX_TO_AGENT / 2);
		}
		if ((text = read_file_str(req->args[0], &len)) == NULL) {
			json_decref(args);
			return termsafe_fail(cause, FP_ERR, "execute: cannot read %s: %s", req->args[0],
			    strerror(errno));
		}
		abs = realpath(req->args[0], NULL);
		rc = runner_add_str(args, "code", text, "execute", cause);
		if (rc == FP_OK)
			rc = runner_add_str(args, "filename", abs ? abs : req->args[0], "execute", cause);
		free(text);
		free(abs);
	} else {
		for (i = 0; i < req->nargs; i++)
			sbuf_addf(&code, "%s%s", i ? " " : "", req->args[i]);
		rc = runner_add_str(args, "code", code.s, "execute", cause);
		sbuf_free(&code);
	}
	if (rc != FP_OK) {
		json_decref(args);
		return rc;
	}
	*argsp = args;
	return FP_OK;
}

int
runner_cmd_execute(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct runner *r = ctx;
	struct proto_msg end;
	json_t *args;
	long timeout;
	int rc;

	if ((rc = execute_args(req, &args, &timeout, cause)) != FP_OK)
		return rc;
	if ((rc = runner_stream(r, "execute", args, timeout, NULL, NULL, &end, cause)) != FP_OK)
		return rc;
	if (!end.ok)
		rc = statement_failed(r, &end, "execute", cause);
	proto_msg_clear(&end);
	(void)out;
	return rc;
}

/* The parsed `execute ...` of line, or NULL (*cause says why when it is not one). */
static struct cmd_request *
parse_statement(const char *line, char **cause)
{
	struct cmd_request *req = NULL;

	if (command_parse(line, &req, cause) != FP_OK)
		return NULL;
	if (req == NULL || req->spec->run != runner_cmd_execute) {
		command_request_free(req);
		fail(cause, FP_EUSAGE, "only execute runs in the background");
		return NULL;
	}
	return req;
}

bool
runner_is_statement(const char *line)
{
	struct cmd_request *req = parse_statement(line, NULL);

	command_request_free(req);
	return req != NULL;
}

/* The session's calls for a statement, as the statement handler's typed ones. */
static void
relay_event(void *ctx, uint64_t id, json_t *data)
{
	struct runner_statement *st = ctx;
	struct output_chunk c;

	(void)id;
	if (output_chunk_parse(data, &c)) {
		st->h->output(st->ctx, c.text, c.len);
		output_chunk_clear(&c);
	}
}

static void
relay_end(void *ctx, uint64_t id, const struct proto_msg *end)
{
	struct runner_statement *st = ctx;
	struct sbuf text = { 0 };
	char *cause = NULL;
	int rc = runner_statement_end(end, "execute", &text, &cause);

	(void)id;
	st->h->end(st->ctx, rc, text.s != NULL ? text.s : "", text.len, cause);
	sbuf_free(&text);
	free(cause);
}

static void
relay_error(void *ctx, uint64_t id, int status, const char *cause)
{
	struct runner_statement *st = ctx;

	(void)id;
	st->h->error(st->ctx, status, cause);
}

static const struct session_handler relay = {
	.event = relay_event, .end = relay_end, .error = relay_error,
};

int
runner_start(struct runner *r, const char *line, struct runner_statement *st,
    uint64_t *id, char **cause)
{
	struct cmd_request *req = parse_statement(line, cause);
	struct session *s;
	json_t *args = NULL;
	long timeout;
	int rc;

	if (req == NULL)
		return FP_EUSAGE;
	rc = execute_args(req, &args, &timeout, cause);
	command_request_free(req);
	if (rc != FP_OK)
		return rc;
	if ((rc = runner_agent(r, ATTACH_LOAD, &s, cause)) != FP_OK) {
		json_decref(args);
		return rc;
	}
	if ((rc = session_start(s, "execute", args, &relay, st, id, cause)) != FP_OK)
		runner_agent_failed(r, rc);
	return rc;
}

int
runner_statement_end(const struct proto_msg *end, const char *cmd, struct sbuf *text, char **cause)
{
	struct statement_end e;

	if (end->ok)
		return FP_OK;
	if (strcmp(end->kind, "cancelled") == 0) {
		sbuf_add(text, "KeyboardInterrupt\n");
		return fail(cause, FP_ERR, "%s: interrupted", cmd);
	}
	statement_end_from_msg(end, &e);
	if (e.traceback != NULL && *e.traceback != '\0')
		sbuf_add(text, e.traceback);
	statement_end_clear(&e);
	return runner_end_failure(end, cmd, cause);
}

static bool
is_exit(const char *line)
{
	static const char *const words[] = { "exit", "exit()", "quit", "quit()" };
	size_t i, n;

	while (*line == ' ' || *line == '\t')
		line++;
	n = strlen(line);
	while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
		n--;
	for (i = 0; i < FP_NELEM(words); i++)
		if (strlen(words[i]) == n && strncmp(line, words[i], n) == 0)
			return true;
	return false;
}

/* Does `line` (not typed at a terminal) close the indented block in buf? */
static bool
ends_block(const struct sbuf *buf, const char *line)
{
	static const char *const go_on[] = { "else", "elif", "except", "finally", ")", "]", "}" };
	const char *last;
	size_t i;

	if (buf->len < 2 || line[0] == '\0' || line[0] == ' ' || line[0] == '\t' ||
	    line[0] == '#')
		return false;
	/* The last buffered line (buf ends with its newline) must be indented. */
	last = buf->s + buf->len - 1;
	while (last > buf->s && last[-1] != '\n')
		last--;
	if (*last != ' ' && *last != '\t')
		return false;
	for (i = 0; i < FP_NELEM(go_on); i++)
		if (strncmp(line, go_on[i], strlen(go_on[i])) == 0)
			return false;
	return true;
}

int
runner_cmd_console(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct runner *r = ctx;
	struct sbuf buf = { 0 };
	struct sigaction old;
	struct proto_msg end;
	struct statement_end done;
	struct session *s;
	unsigned failures = 0;
	bool interrupted, incomplete, eof = false;
	char *line, *why = NULL, *code, *pushback = NULL;
	json_t *args;
	int rc;

	if ((rc = runner_agent(r, ATTACH_LOAD, &s, cause)) != FP_OK)
		return rc;
	if (r->io.interactive && !r->banner_shown) {
		char *banner = xasprintf("Python %s console inside process %d (flight_profiler agent %s).\n"
		    "`import __main__` reaches the program's globals; exit() or Ctrl-D leaves, "
		    "Ctrl-C interrupts a statement.\n", session_info(s)->python, (int)r->pid,
		    session_info(s)->agent);

		runner_write(r, banner);
		free(banner);
		r->banner_shown = true;
	}
	for (;;) {
		if (pushback != NULL) {
			line = pushback;
			pushback = NULL;
			interrupted = false;
		} else {
			sigint_catch(&old);
			line = r->io.read_line(r->io.ctx, buf.len ? "... " : ">>> ", &interrupted);
			sigint_restore(&old);
		}
		/*
		 * A script piped in has no blank line after each block: there a
		 * line back at column 0 after an indented one ends the block, as
		 * if the blank line had been typed (else/elif/except/finally and
		 * closing brackets continue it).
		 */
		if (line != NULL && !r->io.interactive && ends_block(&buf, line)) {
			pushback = line;
			line = xstrdup("");
		}
		if (line == NULL && interrupted) {
			runner_write(r, "\nKeyboardInterrupt\n");
			sbuf_free(&buf);
			continue;
		}
		if (line == NULL) {
			if (buf.len == 0)
				break;
			eof = true;	/* finish the statement being typed */
		} else if (buf.len == 0 && is_exit(line)) {
			free(line);
			break;
		} else {
			if (buf.len == 0 && line[strspn(line, " \t\r")] == '\0') {
				free(line);
				continue;
			}
			sbuf_addf(&buf, "%s\n", line);
			free(line);
		}
		/*
		 * As Python's own console: the lines joined without a final newline,
		 * so a block stays open until a blank line (or the input's end).
		 */
		code = xstrndup(buf.s, !eof && buf.len > 0 ? buf.len - 1 : buf.len);
		args = json_object();
		rc = runner_add_str(args, "code", code, "console", &why);
		free(code);
		if (rc != FP_OK) {
			json_decref(args);
			runner_write(r, why);
			runner_write(r, "\n");
			free(why);
			why = NULL;
			sbuf_free(&buf);
			failures++;
			continue;
		}
		if ((rc = runner_stream(r, "console", args, 0, NULL, NULL, &end, cause)) != FP_OK) {
			sbuf_free(&buf);
			free(pushback);
			return rc;
		}
		statement_end_from_msg(&end, &done);
		incomplete = end.ok && done.incomplete;
		statement_end_clear(&done);
		if (incomplete && !eof) {
			proto_msg_clear(&end);
			continue;	/* more lines to come */
		}
		if (incomplete) {
			runner_write(r, "console: the input ended inside a statement\n");
			failures++;
		} else if (!end.ok) {
			if (statement_failed(r, &end, "console", &why) != FP_OK)
				failures++;
			free(why);
			why = NULL;
		}
		proto_msg_clear(&end);
		sbuf_free(&buf);
		if (eof)
			break;
	}
	sbuf_free(&buf);
	free(pushback);
	if (r->io.interactive)
		runner_write(r, "\n");
	(void)out;
	(void)req;
	if (failures > 0 && !r->io.interactive)
		return fail(cause, FP_ERR, "console: %u statement%s failed", failures,
		    failures == 1 ? "" : "s");
	return FP_OK;
}

/* ---- stack ---------------------------------------------------------------------- */

static long
stack_repeat(void)
{
	const char *env = getenv("FP_STACK_REPEAT");
	long n = env != NULL ? strtol(env, NULL, 10) : 1;

	return n < 1 ? 1 : n > 100000 ? 100000 : n;
}

int
runner_exec(struct runner *r, const char *line, struct sbuf *out, char **cause)
{
	const struct cmd_spec *spec = command_of_line(line);
	struct proc_thread_stat st;
	struct cmd_request *req;
	pid_t pid;
	bool existed;
	long n;
	int rc;

	/* A command this build or this front end lacks says so before its usage. */
	if (spec != NULL && (rc = command_unavailable(spec, cause)) != FP_OK)
		return rc;
	if ((rc = command_parse(line, &req, cause)) != FP_OK)
		return rc;
	if (req == NULL)
		return FP_OK;
	spec = req->spec;
	/* Over a set, a command reads the set itself (CMD_SET) or runs in each member. */
	if (r->set != NULL && !(spec->flags & CMD_SET) && runner_named_pid(req, 0) <= 0) {
		rc = runner_set_each(r, req, out, cause);
		command_request_free(req);
		return rc;
	}
	/* A subcommand not built while its command is (mem diff, one day). */
	if ((rc = command_unavailable(spec, cause)) != FP_OK) {
		command_request_free(req);
		return rc;
	}
	pid = runner_named_pid(req, r->pid);
	existed = pid > 0 && procfs_thread_stat(pid, pid, &st);
	rc = spec->run(spec->ctx ? spec->ctx : r, req, out, cause);
	/*
	 * FP_STACK_REPEAT=N, for tests and benchmarks only: `stack` runs N
	 * times in this process, its outputs one after another, so that
	 * thousands of reads cost no process start each.
	 */
	for (n = spec->run == runner_cmd_stack ? stack_repeat() : 1; rc == FP_OK && n > 1; n--)
		rc = spec->run(r, req, out, cause);
	if (spec->ctx == NULL)
		rc = procfs_explain_failure(pid, existed, rc, cause);
	command_request_free(req);
	return rc;
}
