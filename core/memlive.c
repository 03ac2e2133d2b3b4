/*
 * memlive — see memlive.h.  The history is an array of types with an
 * open-addressing hash by name beside it, so a sample of thousands of
 * types folds in one pass.
 */
#include "config.h"

#include "core/memlive.h"

#include <stdlib.h>
#include <string.h>

#include "core/render_agent.h"
#include "core/util.h"

/* Every type in each sample: the trend of a type that falls out of a cut would lie. */
#define LIVE_LIMIT 1000000

static size_t
hash(const char *s)
{
	size_t h = 5381;

	while (*s != '\0')
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static void
rehash(struct memlive *m)
{
	size_t i, k;

	free(m->slots);
	m->nslots = m->nslots ? m->nslots * 2 : 256;
	m->slots = xcalloc(m->nslots, sizeof *m->slots);
	for (i = 0; i < m->ntypes; i++) {
		for (k = hash(m->types[i].type) & (m->nslots - 1); m->slots[k] != 0;
		    k = (k + 1) & (m->nslots - 1))
			;
		m->slots[k] = i + 1;
	}
}

/* The type named `name`, made (all zero) when new. */
static struct memlive_type *
find(struct memlive *m, const char *name)
{
	struct memlive_type *t;
	size_t k;

	if (2 * (m->ntypes + 1) > m->nslots)
		rehash(m);
	for (k = hash(name) & (m->nslots - 1); m->slots[k] != 0; k = (k + 1) & (m->nslots - 1))
		if (strcmp(m->types[m->slots[k] - 1].type, name) == 0)
			return &m->types[m->slots[k] - 1];
	t = ARRAY_PUSH(m->types, m->ntypes, m->atypes);
	memset(t, 0, sizeof *t);
	t->type = xstrdup(name);
	m->slots[k] = m->ntypes;
	return t;
}

static void
push_trend(struct memlive_type *t, long long size)
{
	if (t->ntrend == MEMLIVE_TREND) {
		memmove(t->trend, t->trend + 1, (MEMLIVE_TREND - 1) * sizeof *t->trend);
		t->ntrend--;
	}
	t->trend[t->ntrend++] = size;
}

void
memlive_add(struct memlive *m, const struct mem_table *tab)
{
	long long *seen = xcalloc(m->ntypes + tab->nrows + 1, sizeof *seen);
	size_t i, before = m->ntypes;

	/* Whatever is not in this sample has gone to zero. */
	for (i = 0; i < tab->nrows; i++) {
		struct memlive_type *t = find(m, tab->rows[i].type);

		t->count = tab->rows[i].count;
		t->size = tab->rows[i].size;
		if (m->samples == 0) {
			t->base_count = t->count;
			t->base_size = t->size;
		}
		push_trend(t, t->size);
		seen[t - m->types] = 1;
	}
	for (i = 0; i < before; i++) {
		if (!seen[i]) {
			m->types[i].count = m->types[i].size = 0;
			push_trend(&m->types[i], 0);
		}
	}
	free(seen);
	m->scan = tab->scan;
	m->samples++;
}

void
memlive_rebase(struct memlive *m)
{
	size_t i;

	for (i = 0; i < m->ntypes; i++) {
		m->types[i].base_count = m->types[i].count;
		m->types[i].base_size = m->types[i].size;
	}
	m->base_sample = m->samples;
}

/* Cancel request `kind`; its end is not waited for (forget: nothing of it reaches the handler). */
static void
drop(struct memlive *m, enum memlive_kind kind, struct session *s, bool forget)
{
	struct memlive_req *r = &m->req[kind];

	if (!r->busy || r->s != s)
		return;
	session_cancel(s, r->id, NULL);
	if (forget) {
		session_forget(s, r->id);
		r->busy = false;
	}
}

struct memlive *
memlive_new(const struct memlive_handler *h, void *ctx)
{
	struct memlive *m = xcalloc(1, sizeof *m);
	int k;

	m->h = h;
	m->ctx = ctx;
	for (k = 0; k < MEMLIVE__KINDS; k++) {
		m->req[k].m = m;
		m->req[k].kind = (enum memlive_kind)k;
	}
	return m;
}

void
memlive_free(struct memlive *m, struct session *s)
{
	size_t i;
	int k;

	if (m == NULL)
		return;
	for (k = 0; k < MEMLIVE__KINDS; k++) {
		if (s != NULL)
			drop(m, (enum memlive_kind)k, s, true);
		free(m->req[k].what);
	}
	for (i = 0; i < m->ntypes; i++)
		free(m->types[i].type);
	free(m->types);
	free(m->slots);
	free(m);
}

bool
memlive_running(const struct memlive *m, enum memlive_kind kind)
{
	return m->req[kind].busy;
}

/* ---- the session's calls, as the handler's typed ones ------------------------- */

static void
on_event(void *ctx, uint64_t id, json_t *data)
{
	struct memlive_req *r = ctx;
	struct memlive *m = r->m;
	struct mem_table *t;

	(void)id;
	if (r->kind == MEMLIVE_TORCH && json_is_string(json_object_get(data, "waiting"))) {
		m->h->torch_hooked(m->ctx, model_int(data, "modules", 0));
		return;
	}
	if (r->kind != MEMLIVE_LIVE || data == NULL || m->frozen)
		return;
	t = mem_table_parse(data);
	m->interval = json_number_value(json_object_get(data, "interval"));
	memlive_feed(m, t);
	mem_table_free(t);
}

void
memlive_feed(struct memlive *m, const struct mem_table *t)
{
	memlive_add(m, t);
	m->h->sample(m->ctx, m);
}

static void
on_end(void *ctx, uint64_t id, const struct proto_msg *end)
{
	struct memlive_req *r = ctx;
	struct memlive *m = r->m;
	struct value_block *b;
	struct sbuf text = { 0 };

	(void)id;
	r->busy = false;
	if (!end->ok) {
		if (end->kind == NULL || strcmp(end->kind, "cancelled") != 0)
			m->h->error(m->ctx, r->kind, end->error ? end->error : "failed");
		return;
	}
	if (r->kind == MEMLIVE_SITES) {
		m->h->sites(m->ctx, mem_sites_parse(end->data));
	} else if (r->kind == MEMLIVE_TORCH) {
		m->h->torch(m->ctx, torch_modules_parse(end->data));
	} else if (r->kind == MEMLIVE_INSTANCES) {
		b = value_block_parse(end->data);
		render_value_block(&text, b);
		value_block_free(b);
		m->h->text(m->ctx, text.s ? text.s : "");
		sbuf_free(&text);
	}
}

static void
on_error(void *ctx, uint64_t id, int status, const char *cause)
{
	struct memlive_req *r = ctx;

	(void)id;
	(void)status;
	r->busy = false;
	r->m->h->error(r->m->ctx, r->kind, cause);
}

static const struct session_handler relay = {
	.event = on_event, .end = on_end, .error = on_error,
};

static int
send_req(struct memlive *m, enum memlive_kind kind, struct session *s, const char *cmd,
    json_t *args, char **cause)
{
	struct memlive_req *r = &m->req[kind];
	int rc;

	if (r->busy && r->s == s) {
		json_decref(args);
		return fail(cause, FP_ERR, "still waiting for the last answer");
	}
	rc = session_start(s, cmd, args, &relay, r, &r->id, cause);
	if (rc == FP_OK) {
		r->busy = true;
		r->s = s;
	}
	return rc;
}

int
memlive_start(struct memlive *m, struct session *s, double interval, char **cause)
{
	/* A new pace: the old stream is cancelled and its end not waited for. */
	drop(m, MEMLIVE_LIVE, s, true);
	return send_req(m, MEMLIVE_LIVE, s, "mem", json_pack("{s:s,s:f,s:i,s:s}", "action", "live",
	    "interval", interval, "limit", LIVE_LIMIT, "order", "descending"), cause);
}

void
memlive_stop(struct memlive *m, struct session *s)
{
	drop(m, MEMLIVE_LIVE, s, false);
}

int
memlive_sites(struct memlive *m, struct session *s, const char *what, int frames, char **cause)
{
	struct memlive_req *r = &m->req[MEMLIVE_SITES];

	/* stop must go even while a diff is on its way: that answer is dropped */
	if (strcmp(what, "stop") == 0 && r->busy && r->s == s) {
		session_forget(s, r->id);
		r->busy = false;
	}
	free(r->what);
	r->what = xstrdup(what);
	return send_req(m, MEMLIVE_SITES, s, "mem", json_pack("{s:s,s:s,s:i,s:i}", "action", "sites",
	    "what", what, "frames", frames, "limit", 200), cause);
}

int
memlive_instances(struct memlive *m, struct session *s, const char *type, int n, char **cause)
{
	const char *dot = strrchr(type, '.');
	char *module = dot ? xstrndup(type, (size_t)(dot - type)) : xstrdup("builtins");
	json_t *args = json_pack("{s:s,s:s,s:s,s:i,s:b,s:b,s:i}", "action", "getInstances",
	    "module", module, "class", dot ? dot + 1 : type, "depth", 1, "raw", 0, "verbose", 0,
	    "limit", n);

	free(module);
	if (args == NULL)
		return fail(cause, FP_EUSAGE, "the type's name is not valid UTF-8");
	return send_req(m, MEMLIVE_INSTANCES, s, "vmtool", args, cause);
}

int
memlive_torch(struct memlive *m, struct session *s, int steps, double timeout, char **cause)
{
	return send_req(m, MEMLIVE_TORCH, s, "torch", json_pack("{s:s,s:i,s:f}", "action", "modules",
	    "steps", steps, "timeout", timeout), cause);
}

void
memlive_torch_cancel(struct memlive *m, struct session *s)
{
	drop(m, MEMLIVE_TORCH, s, true);
}
