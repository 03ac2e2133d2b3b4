/*
 * stackset — `stack` over a set of processes (see stackset.h).
 */
#include "config.h"

#include "core/stackset.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/pystack.h"
#include "core/render.h"
#include "core/source.h"
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

/* One thread of one member, with the key it groups by. */
struct entry {
	struct read_member *rm;
	const struct py_thread *t;
	char *role;		/* the thread's name, digits as '*' (a pool's workers are one role) */
	char *key;
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

static char *
role_of(const struct py_thread *t)
{
	const char *name = t->name != NULL ? t->name : "?";
	struct sbuf s = { 0 };

	for (; *name != '\0'; name++) {
		if (isdigit((unsigned char)*name)) {
			while (isdigit((unsigned char)name[1]))
				name++;
			sbuf_add(&s, "*");
		} else {
			sbuf_addn(&s, name, 1);
		}
	}
	return s.s != NULL ? s.s : xstrdup("");
}

static char *
key_of(const struct entry *e, bool by_function)
{
	const struct py_thread *t = e->t;
	struct sbuf s = { 0 };
	size_t i;

	sbuf_addf(&s, "%s\n%s\n", e->role, t->partial ? "partial" : t->error ? t->error : "");
	for (i = t->nframes; i-- > 0;) {
		const struct py_frame *f = &t->frames[i];

		sbuf_addf(&s, "%s\x1f%s", f->filename ? f->filename : "?", render_frame_function(f));
		if (!by_function)
			sbuf_addf(&s, "\x1f%d", f->line);
		sbuf_add(&s, "\n");
	}
	return s.s;
}

static int
cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c != 0)
		return c;
	return (x->rm->m->pid > y->rm->m->pid) - (x->rm->m->pid < y->rm->m->pid);
}

struct group {
	struct entry *first;	/* sorted by pid within the group */
	size_t n;
};

static int
cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return (x->first->rm->m->pid > y->first->rm->m->pid) -
	    (x->first->rm->m->pid < y->first->rm->m->pid);
}

static void
group_header(struct sbuf *out, const struct group *g)
{
	pid_t *pids = xcalloc(g->n, sizeof *pids);
	size_t i, np = 0;
	bool names_differ = false;

	for (i = 0; i < g->n; i++) {
		if (np == 0 || pids[np - 1] != g->first[i].rm->m->pid)
			pids[np++] = g->first[i].rm->m->pid;
		if (strcmp(g->first[i].t->name ? g->first[i].t->name : "?",
		    g->first[0].t->name ? g->first[0].t->name : "?") != 0)
			names_differ = true;
	}
	sbuf_addf(out, "%zu thread%s", g->n, g->n == 1 ? "" : "s");
	if (np > 1)
		sbuf_addf(out, " in %zu processes", np);
	sbuf_addf(out, " \u2014 pid%s ", np == 1 ? "" : "s");
	procset_ranges(out, pids, np);
	/* the role when names differ (Thread-* (worker)), else the one name */
	termsafe_addf(out, ", thread%s %s", g->n == 1 ? "" : "s",
	    names_differ ? g->first[0].role : g->first[0].t->name ? g->first[0].t->name : "?");
	if (g->first[0].t->partial)
		sbuf_add(out, " [partial]");
	sbuf_add(out, ":\n");
	free(pids);
}

static void
group_body(struct sbuf *out, const struct group *g, bool by_function)
{
	const struct py_thread *t = g->first[0].t;
	size_t i;

	for (i = t->nframes; i-- > 0;) {
		const struct py_frame *f = &t->frames[i];

		if (by_function)
			termsafe_addf(out, "    File \"%s\", in %s\n", f->filename, render_frame_function(f));
		else
			render_frame_line(out, "", f->filename, f->line, render_frame_function(f),
			    g->first[0].rm->sc);
	}
	if (t->nframes == 0 && t->error == NULL)
		sbuf_add(out, "    (no Python frames)\n");
	if (t->error != NULL)
		termsafe_addf(out, "    (%s: %s)\n", t->partial ? "partial" : "stack cut short", t->error);
}

static void
grouped(struct sbuf *out, struct read_member *rms, size_t n, bool by_function)
{
	struct entry *e = NULL;
	struct group *g = NULL;
	size_t ne = 0, ae = 0, ng = 0, ag = 0, i, k, odd;

	for (i = 0; i < n; i++)
		for (k = 0; rms[i].snap != NULL && k < rms[i].snap->nthreads; k++) {
			struct entry *x = ARRAY_PUSH(e, ne, ae);

			x->rm = &rms[i];
			x->t = &rms[i].snap->threads[k];
			x->role = role_of(x->t);
			x->key = key_of(x, by_function);
		}
	if (ne > 0)
		qsort(e, ne, sizeof *e, cmp_entry);
	for (i = 0; i < ne; i++) {
		if (i == 0 || strcmp(e[i].key, e[i - 1].key) != 0)
			*ARRAY_PUSH(g, ng, ag) = (struct group){ &e[i], 0 };
		g[ng - 1].n++;
	}
	if (ng > 0)
		qsort(g, ng, sizeof *g, cmp_group);
	for (i = 0, odd = 0; i < ng; i++) {
		if (g[i].n == 1 && odd++ == 0 && i > 0)
			sbuf_add(out, "\nOdd ones out (a stack no other thread shares):\n");
		sbuf_add(out, "\n");
		group_header(out, &g[i]);
		group_body(out, &g[i], by_function);
	}
	for (i = 0; i < ne; i++) {
		free(e[i].role);
		free(e[i].key);
	}
	free(e);
	free(g);
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
		sbuf_addf(out, "Process set: %zu process%s, %zu Python (%zu threads)", set->n,
		    set->n == 1 ? "" : "es", nread, nthreads);
		if (nread < set->n)
			sbuf_addf(out, ", %zu skipped", set->n - nread);
		sbuf_add(out, "\n");
		if (o->group) {
			grouped(out, rms, set->n, o->by_function);
		} else {
			for (i = 0; i < set->n; i++) {
				if (rms[i].snap == NULL)
					continue;
				sbuf_add(out, "\n");
				render_stack(out, rms[i].snap, py_reader_runtime(rms[i].reader),
				    rms[i].m->cmdline, rms[i].sc);
			}
		}
		if (nread < set->n)
			sbuf_add(out, "\nSkipped:\n");
		for (i = 0; i < set->n; i++)
			if (rms[i].snap == NULL)
				termsafe_addf(out, "  pid %d (%s): %s\n", (int)rms[i].m->pid,
				    rms[i].m->cmdline ? rms[i].m->cmdline : "?", rms[i].skip);
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
