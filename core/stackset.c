/*
 * stackset — `stack` over a set of processes (see stackset.h).
 */
#include "config.h"

#include "core/stackset.h"

#include <stdlib.h>
#include <string.h>

#include "core/command.h"
#include "core/jsonrec.h"
#include "core/perfset.h"
#include "core/pystack.h"
#include "core/render.h"
#include "core/source.h"
#include "core/stackgroup.h"
#include "core/termsafe.h"

/* A member as read: its snapshot, or why there is none. */
struct read_member {
	const struct proc_member *m;
	struct py_reader *reader;
	struct py_snapshot *snap;
	struct source_cache *sc;
	char *skip;		/* why it was not read */
	int rc;
};

static void
read_one(struct read_member *rm, const struct stackset_opts *o)
{
	struct py_snapshot_opts so = { .block = o->block };
	char *cause = NULL;

	if (rm->m->cmdline == NULL) {
		rm->skip = xstrdup("exited");
		rm->rc = FP_EEXITED;
		return;
	}
	if ((rm->rc = py_reader_open(rm->m->pid, &rm->reader, &cause)) == FP_OK &&
	    (rm->rc = py_reader_snapshot(rm->reader, &so, &rm->snap, &cause)) == FP_OK) {
		rm->sc = source_cache_new(rm->m->pid);
		return;
	}
	rm->skip = cause != NULL ? cause : xstrdup("unreadable");
}

/* RANK in the process's environment (not LOCAL_RANK: one per host), or -1. */
static long
rank_of(pid_t pid)
{
	long rank;
	bool local;

	return perfset_rank(pid, &rank, &local) && !local ? rank : -1;
}

/* Every thread of every member read, to core/stackgroup. */
static void
grouped(struct sbuf *out, struct read_member *rms, size_t n, bool by_function, bool json)
{
	struct stackgroup_item *items = NULL;
	size_t ni = 0, ai = 0, i, k;
	long rank;

	for (i = 0; i < n; i++) {
		rank = rms[i].snap != NULL ? rank_of(rms[i].m->pid) : -1;
		for (k = 0; rms[i].snap != NULL && k < rms[i].snap->nthreads; k++)
			*ARRAY_PUSH(items, ni, ai) = (struct stackgroup_item){
				.pid = rms[i].m->pid, .rank = rank,
				.t = &rms[i].snap->threads[k], .sc = rms[i].sc,
			};
	}
	stackgroup_render(out, items, ni, by_function, json);
	free(items);
}

static void
text_out(struct sbuf *out, struct read_member *rms, size_t n, const struct stackset_opts *o,
    size_t nread, size_t nthreads)
{
	size_t i;

	sbuf_addf(out, "Process set: %zu process%s, %zu Python (%zu threads)", n,
	    n == 1 ? "" : "es", nread, nthreads);
	if (nread < n)
		sbuf_addf(out, ", %zu skipped", n - nread);
	sbuf_add(out, "\n");
	if (o->group) {
		grouped(out, rms, n, o->by_function, false);
	} else {
		for (i = 0; i < n; i++) {
			if (rms[i].snap == NULL)
				continue;
			sbuf_add(out, "\n");
			render_stack(out, rms[i].snap, py_reader_runtime(rms[i].reader),
			    rms[i].m->cmdline, rms[i].sc);
		}
	}
	if (nread < n)
		sbuf_add(out, "\nSkipped:\n");
	for (i = 0; i < n; i++)
		if (rms[i].snap == NULL)
			termsafe_addf(out, "  pid %d (%s): %s\n", (int)rms[i].m->pid,
			    rms[i].m->cmdline ? rms[i].m->cmdline : "?", rms[i].skip);
}

/* The same as records (doc/json.md): "set", then "group" or "stack", then "skipped". */
static void
json_out(struct sbuf *out, struct read_member *rms, size_t n, const struct stackset_opts *o,
    size_t nread, size_t nthreads)
{
	json_t *rec = jsonrec_new("set");
	size_t i;

	json_object_set_new(rec, "processes", json_integer((json_int_t)n));
	json_object_set_new(rec, "python", json_integer((json_int_t)nread));
	json_object_set_new(rec, "threads", json_integer((json_int_t)nthreads));
	json_object_set_new(rec, "skipped", json_integer((json_int_t)(n - nread)));
	jsonrec_emit(out, rec);
	if (o->group)
		grouped(out, rms, n, o->by_function, true);
	for (i = 0; !o->group && i < n; i++)
		if (rms[i].snap != NULL)
			jsonrec_emit(out, jsonrec_stack(rms[i].m->pid, rms[i].m->cmdline, rms[i].snap,
			    rms[i].sc));
	for (i = 0; i < n; i++)
		if (rms[i].snap == NULL)
			jsonrec_emit(out, jsonrec_skipped(rms[i].m->pid, rms[i].m->cmdline, rms[i].skip));
}

int
stackset_run(const struct proc_set *set, const struct stackset_opts *o,
    struct sbuf *out, char **cause)
{
	struct read_member *rms = xcalloc(set->n ? set->n : 1, sizeof *rms);
	size_t i, nread = 0, nthreads = 0;
	int rc = FP_OK;

	for (i = 0; i < set->n; i++) {
		rms[i].m = &set->m[i];
		read_one(&rms[i], o);
		if (rms[i].snap != NULL) {
			nread++;
			nthreads += rms[i].snap->nthreads;
		}
	}
	if (nread == 0) {
		if (set->n == 1)
			rc = termsafe_fail(cause, rms[0].rc, "process %d: %s", (int)set->m[0].pid,
			    rms[0].skip);
		else
			rc = termsafe_fail(cause, FP_ENOPROC, "none of the %zu processes of the set "
			    "could be read (pid %d: %s)", set->n, (int)set->m[0].pid, rms[0].skip);
	} else {
		if (o->json)
			json_out(out, rms, set->n, o, nread, nthreads);
		else
			text_out(out, rms, set->n, o, nread, nthreads);
	}
	for (i = 0; i < set->n; i++) {
		py_snapshot_free(rms[i].snap);
		py_reader_close(rms[i].reader);
		if (rms[i].sc != NULL)
			source_cache_free(rms[i].sc);
		free(rms[i].skip);
	}
	free(rms);
	return rc;
}

int
stackset_cmd(const struct proc_set_spec *spec, const struct cmd_request *req, bool json,
    struct sbuf *out, char **cause)
{
	const char *group = command_opt(req, "--group");
	struct stackset_opts o = {
		.block = command_opt(req, "--block") != NULL,
		.group = group != NULL, .by_function = group != NULL && strcmp(group, "function") == 0,
		.json = json,
	};
	struct proc_set set;
	int rc;

	if (command_opt(req, "--native") || command_opt(req, "--locals") || command_opt(req, "--asyncio"))
		return fail(cause, FP_EUSAGE, "stack: --native, --locals and -a read one process: "
		    "over a process set, stack takes --group, --block and -f");
	if ((rc = procset_resolve(spec, &set, cause)) != FP_OK)
		return rc;
	rc = stackset_run(&set, &o, out, cause);
	procset_clear(&set);
	return rc;
}
