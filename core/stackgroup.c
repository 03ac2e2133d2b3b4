/*
 * stackgroup — stacks merged across threads, processes and hosts (see
 * stackgroup.h).  Moved out of stackset.c so that --hosts groups the
 * records of many hosts with the very code that groups a local set.
 */
#include "config.h"

#include "core/stackgroup.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonrec.h"
#include "core/procset.h"
#include "core/render.h"
#include "core/termsafe.h"

/* One thread, with the key it groups by. */
struct entry {
	const struct stackgroup_item *it;
	char *role;		/* the thread's name, digits as '*' (a pool's workers are one role) */
	char *key;
};

struct group {
	struct entry *first;	/* sorted by host, then pid, within the group */
	size_t n;
};

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
	const struct py_thread *t = e->it->t;
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

/* Host, then pid: the order members are named in. */
static int
cmp_member(const struct stackgroup_item *x, const struct stackgroup_item *y)
{
	if (x->host_index != y->host_index)
		return x->host_index < y->host_index ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int
cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c != 0 ? c : cmp_member(x->it, y->it);
}

static int
cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return cmp_member(x->first->it, y->first->it);
}

static const char *
name_of(const struct entry *e)
{
	return e->it->t->name != NULL ? e->it->t->name : "?";
}

static int
cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/*
 * One host's members g->first[from..to): "pids 4101–4107", or when every
 * process has a rank, "ranks 0–6 (pids 4101–4107)": the rank is what a
 * job's user names its processes by.
 */
static size_t
host_members(struct sbuf *out, const struct group *g, size_t from, size_t to, pid_t *buf)
{
	size_t i, np = 0, nr = 0, np_r;
	bool ranked = true;

	for (i = from; i < to; i++) {
		if (np > 0 && buf[np - 1] == g->first[i].it->pid)
			continue;
		buf[np++] = g->first[i].it->pid;
		ranked = ranked && g->first[i].it->rank >= 0 && g->first[i].it->rank <= 1000000;
	}
	if (ranked) {
		pid_t *ranks = buf + np;

		for (i = from; i < to; i++)
			if (i == from || g->first[i].it->pid != g->first[i - 1].it->pid)
				ranks[nr++] = (pid_t)g->first[i].it->rank;
		qsort(ranks, nr, sizeof *ranks, cmp_pid);
		/* a rank's own workers (a DataLoader's) inherit its RANK */
		for (i = 0, np_r = 0; i < nr; i++)
			if (np_r == 0 || ranks[np_r - 1] != ranks[i])
				ranks[np_r++] = ranks[i];
		nr = np_r;
		sbuf_addf(out, "rank%s ", nr == 1 ? "" : "s");
		procset_ranges(out, ranks, nr);
		sbuf_add(out, " (");
	}
	sbuf_addf(out, "pid%s ", np == 1 ? "" : "s");
	procset_ranges(out, buf, np);
	if (ranked)
		sbuf_add(out, ")");
	return np;
}

/* Each host's members ("h1: pids ...; h2: ranks ..."); *nprocs the processes. */
static void
group_members(struct sbuf *out, const struct group *g, size_t *nprocs)
{
	pid_t *buf = xcalloc(2 * g->n, sizeof *buf);
	size_t i = 0, start;

	*nprocs = 0;
	while (i < g->n) {
		const struct stackgroup_item *h = g->first[i].it;

		for (start = i; i < g->n && g->first[i].it->host_index == h->host_index; i++)
			;
		if (start > 0)
			sbuf_add(out, "; ");
		if (h->host != NULL)
			termsafe_addf(out, "%s: ", h->host);
		*nprocs += host_members(out, g, start, i, buf);
	}
	free(buf);
}

static void
group_header(struct sbuf *out, const struct group *g)
{
	struct sbuf members = { 0 };
	bool names_differ = false;
	size_t i, np;

	for (i = 0; i < g->n; i++)
		if (strcmp(name_of(&g->first[i]), name_of(&g->first[0])) != 0)
			names_differ = true;
	group_members(&members, g, &np);
	sbuf_addf(out, "%zu thread%s", g->n, g->n == 1 ? "" : "s");
	if (np > 1)
		sbuf_addf(out, " in %zu processes", np);
	sbuf_addf(out, " \u2014 %s", members.s);
	/* the role when names differ (Thread-* (worker)), else the one name */
	termsafe_addf(out, ", thread%s %s", g->n == 1 ? "" : "s",
	    names_differ ? g->first[0].role : name_of(&g->first[0]));
	if (g->first[0].it->t->partial)
		sbuf_add(out, " [partial]");
	sbuf_add(out, ":\n");
	sbuf_free(&members);
}

static void
group_body(struct sbuf *out, const struct group *g, bool by_function)
{
	const struct stackgroup_item *it = g->first[0].it;
	const struct py_thread *t = it->t;
	size_t i;

	for (i = t->nframes; i-- > 0;) {
		const struct py_frame *f = &t->frames[i];

		if (by_function) {
			termsafe_addf(out, "    File \"%s\", in %s\n", f->filename, render_frame_function(f));
			continue;
		}
		render_frame_line(out, "", f->filename, f->line, render_frame_function(f), it->sc);
		if (it->code != NULL && it->code[i] != NULL)
			render_code_line(out, it->code[i]);
	}
	if (t->nframes == 0 && t->error == NULL)
		sbuf_add(out, "    (no Python frames)\n");
	if (t->error != NULL)
		termsafe_addf(out, "    (%s: %s)\n", t->partial ? "partial" : "stack cut short", t->error);
}

/* The "group" record of g: its members, its stack (innermost first). */
static json_t *
group_json(const struct group *g, bool odd)
{
	const struct stackgroup_item *it = g->first[0].it;
	json_t *rec = jsonrec_new("group"), *members = json_array(), *frames = json_array();
	size_t i, np;
	struct sbuf text = { 0 };

	for (i = 0; i < g->n; i++) {
		const struct stackgroup_item *m = g->first[i].it;
		json_t *jm = json_pack("{s:i,s:i,s:o}", "pid", (int)m->pid, "tid", (int)m->t->tid,
		    "name", jsonrec_string(m->t->name));

		if (m->host != NULL)
			json_object_set_new(jm, "host", jsonrec_string(m->host));
		if (m->rank >= 0)
			json_object_set_new(jm, "rank", json_integer(m->rank));
		json_array_append_new(members, jm);
	}
	for (i = 0; i < it->t->nframes; i++)
		json_array_append_new(frames, jsonrec_frame(&it->t->frames[i], it->sc,
		    it->code != NULL ? it->code[i] : NULL));
	group_members(&text, g, &np);
	json_object_set_new(rec, "threads", json_integer((json_int_t)g->n));
	json_object_set_new(rec, "processes", json_integer((json_int_t)np));
	json_object_set_new(rec, "role", jsonrec_string(g->first[0].role));
	json_object_set_new(rec, "odd", json_boolean(odd));
	json_object_set_new(rec, "partial", json_boolean(it->t->partial));
	json_object_set_new(rec, "error", jsonrec_string(it->t->error));
	json_object_set_new(rec, "members", members);
	json_object_set_new(rec, "frames", frames);
	sbuf_free(&text);
	return rec;
}

void
stackgroup_render(struct sbuf *out, struct stackgroup_item *items, size_t n, bool by_function,
    bool json)
{
	struct entry *e = xcalloc(n ? n : 1, sizeof *e);
	struct group *g = NULL;
	size_t ng = 0, ag = 0, i, odd;

	for (i = 0; i < n; i++) {
		e[i].it = &items[i];
		e[i].role = role_of(items[i].t);
		e[i].key = key_of(&e[i], by_function);
	}
	if (n > 0)
		qsort(e, n, sizeof *e, cmp_entry);
	for (i = 0; i < n; i++) {
		if (i == 0 || strcmp(e[i].key, e[i - 1].key) != 0)
			*ARRAY_PUSH(g, ng, ag) = (struct group){ &e[i], 0 };
		g[ng - 1].n++;
	}
	if (ng > 0)
		qsort(g, ng, sizeof *g, cmp_group);
	for (i = 0, odd = 0; i < ng; i++) {
		if (json) {
			jsonrec_emit(out, group_json(&g[i], g[i].n == 1 && i > 0));
			continue;
		}
		if (g[i].n == 1 && odd++ == 0 && i > 0)
			sbuf_add(out, "\nOdd ones out (a stack no other thread shares):\n");
		sbuf_add(out, "\n");
		group_header(out, &g[i]);
		group_body(out, &g[i], by_function);
	}
	for (i = 0; i < n; i++) {
		free(e[i].role);
		free(e[i].key);
	}
	free(e);
	free(g);
}
