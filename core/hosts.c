/*
 * hosts — `stack` over many hosts through ssh (see hosts.h).
 */
#include "config.h"

#include "core/hosts.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/command.h"
#include "core/hostrun.h"
#include "core/jsonrec.h"
#include "core/render.h"
#include "core/stackgroup.h"
#include "core/termsafe.h"

#define DEFAULT_TIMEOUT 60.0
#define MAX_CONNECT_TIMEOUT 20

int
hosts_option(struct hosts_opts *o, const char *name, const char *value, char **cause)
{
	char *copy, *word, *save = NULL, *end;

	if (strcmp(name, "--ssh") == 0 || strcmp(name, "--remote-binary") == 0) {
		char **field = strcmp(name, "--ssh") == 0 ? &o->ssh : &o->remote;

		if (*value == '\0')
			return fail(cause, FP_EUSAGE, "%s: the value is empty", name);
		free(*field);
		*field = xstrdup(value);
		return FP_OK;
	}
	if (strcmp(name, "--ssh-timeout") == 0) {
		errno = 0;
		o->timeout = strtod(value, &end);
		if (errno != 0 || end == value || *end != '\0' || !(o->timeout >= 1 && o->timeout <= 3600))
			return fail(cause, FP_EUSAGE, "--ssh-timeout wants seconds from 1 to 3600, not '%s'",
			    value);
		return FP_OK;
	}
	copy = xstrdup(value);
	for (word = strtok_r(copy, ",", &save); word != NULL; word = strtok_r(NULL, ",", &save)) {
		/* A host is never an option of ssh's ("-oProxyCommand=..."). */
		if (*word == '-' || word[strcspn(word, " \t\n")] != '\0') {
			fail(cause, FP_EUSAGE, "--hosts: '%s' is not a host name", word);
			free(copy);
			return FP_EUSAGE;
		}
		o->hosts = xrealloc(o->hosts, (o->nhosts + 1) * sizeof *o->hosts);
		o->hosts[o->nhosts++] = xstrdup(word);
	}
	free(copy);
	if (o->nhosts == 0)
		return fail(cause, FP_EUSAGE, "--hosts: no host given (--hosts h1,h2)");
	return FP_OK;
}

void
hosts_opts_clear(struct hosts_opts *o)
{
	size_t i;

	for (i = 0; i < o->nhosts; i++)
		free(o->hosts[i]);
	free(o->hosts);
	free(o->ssh);
	free(o->remote);
	memset(o, 0, sizeof *o);
}

/* One host's answer, parsed. */
struct host {
	const char *name;
	int index;
	char *error;			/* why it gave nothing, or NULL */
	struct jsonrec_process *procs;	/* its "stack" records */
	size_t nprocs;
	json_t *skipped;		/* its "skipped" records (array) */
	json_t *records;		/* its "stack" and "skipped" records, for --json */
};

/* word in single quotes for a POSIX shell: 'it'\''s'. */
static void
quote_word(struct sbuf *b, const char *word)
{
	sbuf_add(b, b->len > 0 ? " '" : "'");
	for (; *word != '\0'; word++)
		if (*word == '\'')
			sbuf_add(b, "'\\''");
		else
			sbuf_addn(b, word, 1);
	sbuf_add(b, "'");
}

/* The command line the remote shell runs: flight_profiler SET --json --cmd 'stack'. */
static char *
remote_command(const struct hosts_opts *o, const struct proc_set_spec *spec, bool block)
{
	const char *bin = o->remote ? o->remote : getenv("FP_REMOTE_BINARY");
	struct sbuf b = { 0 }, pids = { 0 };
	size_t i;

	quote_word(&b, bin != NULL && *bin != '\0' ? bin : "flight_profiler");
	for (i = 0; i < spec->npids; i++)
		sbuf_addf(&pids, "%s%d", i ? "," : "", (int)spec->pids[i]);
	if (spec->npids > 0)
		quote_word(&b, pids.s);
	if (spec->tree)
		quote_word(&b, "--tree");
	if (spec->match != NULL) {
		quote_word(&b, "--match");
		quote_word(&b, spec->match);
	}
	quote_word(&b, "--json");
	quote_word(&b, "--cmd");
	/* Ungrouped: the grouping is done here, across hosts. */
	quote_word(&b, block ? "stack --block" : "stack");
	sbuf_free(&pids);
	return sbuf_steal(&b);
}

/* ssh's words (split like a shell), our options, the host, the remote command. */
static int
ssh_argv(const struct hosts_opts *o, const char *host, const char *remote, char ***argvp,
    char **cause)
{
	const char *ssh = o->ssh ? o->ssh : getenv("FP_SSH");
	double timeout = o->timeout > 0 ? o->timeout : DEFAULT_TIMEOUT;
	char **words = NULL, **argv;
	size_t n = 0, i;
	int rc;

	if ((rc = command_split(ssh != NULL && *ssh != '\0' ? ssh : "ssh", &words, &n, cause)) != FP_OK)
		return rc;
	if (n == 0) {
		free(words);
		return fail(cause, FP_EUSAGE, "--ssh: the command is empty");
	}
	argv = xcalloc(n + 9, sizeof *argv);
	for (i = 0; i < n; i++)
		argv[i] = words[i];
	free(words);
	argv[n++] = xstrdup("-o");
	argv[n++] = xstrdup("BatchMode=yes");
	argv[n++] = xstrdup("-o");
	argv[n++] = xasprintf("ConnectTimeout=%d", timeout < MAX_CONNECT_TIMEOUT ?
	    (int)(timeout + 0.5) : MAX_CONNECT_TIMEOUT);
	argv[n++] = xstrdup("--");
	argv[n++] = xstrdup(host);
	argv[n++] = xstrdup(remote);
	*argvp = argv;
	return FP_OK;
}

/* The last line of what the host said on stderr: ssh's or flight_profiler's reason. */
static char *
last_line(const struct sbuf *err)
{
	const char *s = err->s != NULL ? err->s : "", *end = s + err->len, *start;

	while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	for (start = end; start > s && start[-1] != '\n'; start--)
		;
	return end > start ? xasprintf("%.*s", (int)(end - start), start) : NULL;
}

/* One record of the host's; false (h->error set) ends the host. */
static bool
take_record(struct host *h, json_t *rec)
{
	const char *type = json_string_value(json_object_get(rec, "type"));
	const char *version = json_string_value(json_object_get(rec, "version"));
	char *cause = NULL;

	if (type == NULL || version == NULL) {
		h->error = xstrdup("its flight_profiler printed something that is not a --json record");
		return false;
	}
	if (strcmp(version, PACKAGE_VERSION) != 0) {
		h->error = xasprintf("its flight_profiler is version %s, this one %s: run the same "
		    "version on every host", version, PACKAGE_VERSION);
		return false;
	}
	if (strcmp(type, "stack") == 0 || strcmp(type, "skipped") == 0) {
		json_object_set_new(rec, "host", jsonrec_string(h->name));
		json_array_append(h->records, rec);
	}
	if (strcmp(type, "stack") == 0) {
		h->procs = xrealloc(h->procs, (h->nprocs + 1) * sizeof *h->procs);
		if (jsonrec_parse_stack(rec, &h->procs[h->nprocs], &cause) != FP_OK) {
			jsonrec_process_clear(&h->procs[h->nprocs]);
			h->error = xasprintf("a stack record it sent is not well-formed: %s", cause);
			free(cause);
			return false;
		}
		h->nprocs++;
	} else if (strcmp(type, "skipped") == 0) {
		json_array_append(h->skipped, rec);
	}
	return true;
}

/* Parse what the host printed, or say why there is nothing. */
static void
parse_host(struct host *h, const struct hostrun *run)
{
	const char *s = run->out.s != NULL ? run->out.s : "", *nl;
	char *why = last_line(&run->err);
	json_t *rec;

	h->skipped = json_array();
	h->records = json_array();
	if (run->start_error != NULL) {
		h->error = xasprintf("ssh did not start: %s", run->start_error);
	} else if (run->timed_out) {
		h->error = xstrdup("no answer in time (--ssh-timeout)");
	} else {
		for (; *s != '\0' && h->error == NULL; s = *nl ? nl + 1 : nl) {
			nl = s + strcspn(s, "\n");
			if (nl == s)
				continue;
			rec = json_loadb(s, (size_t)(nl - s), 0, NULL);
			if (rec == NULL || !take_record(h, rec))
				if (h->error == NULL)
					h->error = xstrdup(run->status == 0 ? "its answer is not JSON" :
					    why ? why : "its flight_profiler failed");
			json_decref(rec);
		}
		if (h->error == NULL && run->status != 0)
			h->error = why != NULL ? xstrdup(why) :
			    xasprintf("ssh or flight_profiler failed (exit status %d)", run->status);
	}
	free(why);
}

/* Every thread of every host's processes, for core/stackgroup. */
static void
grouped(struct sbuf *out, const struct host *h, size_t nh, bool by_function, bool json)
{
	struct stackgroup_item *items = NULL;
	size_t ni = 0, ai = 0, i, p, t;

	for (i = 0; i < nh; i++)
		for (p = 0; p < h[i].nprocs; p++)
			for (t = 0; t < h[i].procs[p].nthreads; t++)
				*ARRAY_PUSH(items, ni, ai) = (struct stackgroup_item){
					.host = h[i].name, .host_index = h[i].index, .pid = h[i].procs[p].pid,
					.rank = h[i].procs[p].rank, .t = &h[i].procs[p].threads[t], .code = h[i].procs[p].code[t],
				};
	stackgroup_render(out, items, ni, by_function, json);
	free(items);
}

/* Without --group: each process's threads in turn under a host-prefixed header. */
static void
each_process(struct sbuf *out, const struct host *h, const struct jsonrec_process *p)
{
	size_t t, f;

	termsafe_addf(out, "\n%s: Process %d: %s\n", h->name, (int)p->pid, p->cmdline ? p->cmdline : "?");
	for (t = 0; t < p->nthreads; t++) {
		const struct py_thread *th = &p->threads[t];

		termsafe_addf(out, "\nThread %d (%s)%s:\n", (int)th->tid, th->name ? th->name : "?",
		    th->partial ? " [partial]" : "");
		for (f = th->nframes; f-- > 0;) {
			render_frame_line(out, "", th->frames[f].filename, th->frames[f].line,
			    th->frames[f].name, NULL);
			if (p->code[t][f] != NULL)
				render_code_line(out, p->code[t][f]);
		}
		if (th->error != NULL)
			termsafe_addf(out, "    (%s: %s)\n", th->partial ? "partial" : "stack cut short", th->error);
	}
}

static const char *
str_or(const json_t *j, const char *dflt)
{
	return json_is_string(j) ? json_string_value(j) : dflt;
}

static void
text_out(struct sbuf *out, const struct host *h, size_t nh, bool group, bool by_function)
{
	size_t i, p, nprocs = 0, nthreads = 0, nskipped = 0, nfailed = 0;
	json_t *rec;

	for (i = 0; i < nh; i++) {
		for (p = 0; p < h[i].nprocs; p++)
			nthreads += h[i].procs[p].nthreads;
		nprocs += h[i].nprocs;
		nskipped += json_array_size(h[i].skipped);
		nfailed += h[i].error != NULL;
	}
	sbuf_addf(out, "Hosts: %zu, %zu answered: %zu Python processes (%zu threads)", nh,
	    nh - nfailed, nprocs, nthreads);
	if (nskipped > 0)
		sbuf_addf(out, ", %zu skipped", nskipped);
	sbuf_add(out, "\n");
	if (group)
		grouped(out, h, nh, by_function, false);
	for (i = 0; !group && i < nh; i++)
		for (p = 0; p < h[i].nprocs; p++)
			each_process(out, &h[i], &h[i].procs[p]);
	if (nskipped > 0)
		sbuf_add(out, "\nSkipped:\n");
	for (i = 0; i < nh; i++)
		json_array_foreach(h[i].skipped, p, rec)
			termsafe_addf(out, "  %s: pid %d (%s): %s\n", h[i].name,
			    (int)json_integer_value(json_object_get(rec, "pid")),
			    str_or(json_object_get(rec, "cmdline"), "?"),
			    str_or(json_object_get(rec, "reason"), "?"));
	if (nfailed > 0)
		sbuf_add(out, "\nHosts that failed:\n");
	for (i = 0; i < nh; i++)
		if (h[i].error != NULL)
			termsafe_addf(out, "  %s: %s\n", h[i].name, h[i].error);
}

/* --json: the hosts' records with their "host", or the groups; a "host_error" for each failure. */
static void
json_out(struct sbuf *out, const struct host *h, size_t nh, bool group, bool by_function)
{
	json_t *rec;
	size_t i, k;

	if (group)
		grouped(out, h, nh, by_function, true);
	for (i = 0; i < nh; i++)
		json_array_foreach(h[i].records, k, rec)
			if (!group || strcmp(json_string_value(json_object_get(rec, "type")), "skipped") == 0)
				jsonrec_emit(out, json_incref(rec));
	for (i = 0; i < nh; i++) {
		if (h[i].error == NULL)
			continue;
		rec = jsonrec_new("host_error");
		json_object_set_new(rec, "host", jsonrec_string(h[i].name));
		json_object_set_new(rec, "error", jsonrec_string(h[i].error));
		jsonrec_emit(out, rec);
	}
}

/* `stack` and its options as --hosts takes them; FP_EUSAGE with *cause for the rest. */
static int
parse_stack(const char *cmd, bool *block, bool *group, bool *by_function, char **cause)
{
	struct cmd_request *req;
	const char *g;
	int rc;

	if ((rc = command_parse(cmd, &req, cause)) != FP_OK)
		return rc;
	if (req == NULL)
		return fail(cause, FP_EUSAGE, "--cmd: the command is empty");
	if (strcmp(req->spec->name, "stack") != 0)
		rc = fail(cause, FP_EUSAGE, "%s: --hosts runs `stack` so far", req->spec->name);
	else if (command_opt(req, "--native") || command_opt(req, "--locals") ||
	    command_opt(req, "--asyncio") || command_opt(req, "--filepath") || command_arg(req, "pid"))
		rc = fail(cause, FP_EUSAGE, "stack: over --hosts, stack takes --group and --block");
	g = command_opt(req, "--group");
	*block = command_opt(req, "--block") != NULL;
	*group = g != NULL;
	*by_function = g != NULL && strcmp(g, "function") == 0;
	command_request_free(req);
	return rc;
}

static void
host_clear(struct host *h)
{
	size_t i;

	for (i = 0; i < h->nprocs; i++)
		jsonrec_process_clear(&h->procs[i]);
	free(h->procs);
	free(h->error);
	json_decref(h->skipped);
	json_decref(h->records);
}

/* Start ssh on every host, parse what each answered. */
static int
ask_hosts(const struct hosts_opts *o, const char *remote, struct host *h, char **cause)
{
	struct hostrun *runs = xcalloc(o->nhosts, sizeof *runs);
	size_t i, k;
	int rc = FP_OK;

	for (i = 0; i < o->nhosts && rc == FP_OK; i++)
		rc = ssh_argv(o, o->hosts[i], remote, &runs[i].argv, cause);
	if (rc == FP_OK) {
		hostrun_all(runs, o->nhosts, o->timeout > 0 ? o->timeout : DEFAULT_TIMEOUT);
		for (i = 0; i < o->nhosts; i++) {
			h[i].name = o->hosts[i];
			h[i].index = (int)i;
			parse_host(&h[i], &runs[i]);
		}
	}
	for (i = 0; i < o->nhosts; i++) {
		for (k = 0; runs[i].argv != NULL && runs[i].argv[k] != NULL; k++)
			free(runs[i].argv[k]);
		free(runs[i].argv);
		hostrun_clear(&runs[i]);
	}
	free(runs);
	return rc;
}

int
hosts_main(const struct hosts_opts *o, const struct proc_set_spec *spec, const char *cmd)
{
	struct host *h = xcalloc(o->nhosts, sizeof *h);
	struct sbuf out = { 0 };
	bool block = false, group = false, by_function = false;
	char *cause = NULL, *remote = NULL;
	size_t i, answered = 0;
	int rc;

	if ((rc = parse_stack(cmd, &block, &group, &by_function, &cause)) == FP_OK &&
	    spec->npids == 0 && spec->match == NULL)
		rc = fail(&cause, FP_EUSAGE, "--hosts: which processes? --tree PID, --match REGEX or PID,PID");
	if (rc == FP_OK) {
		remote = remote_command(o, spec, block);
		rc = ask_hosts(o, remote, h, &cause);
	}
	if (rc == FP_OK) {
		for (i = 0; i < o->nhosts; i++)
			answered += h[i].error == NULL;
		if (o->json)
			json_out(&out, h, o->nhosts, group, by_function);
		else
			text_out(&out, h, o->nhosts, group, by_function);
		termsafe_write(stdout, out.s ? out.s : "", out.len, TERMSAFE_TEXT);
		fflush(stdout);
		if (answered == 0)
			rc = fail(&cause, FP_ERR, "--hosts: no host answered");
	}
	if (rc != FP_OK)
		termsafe_error(stderr, cause);
	for (i = 0; i < o->nhosts; i++)
		host_clear(&h[i]);
	free(h);
	free(remote);
	free(cause);
	sbuf_free(&out);
	return rc;
}
