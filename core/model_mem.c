#include "config.h"

#include "core/model.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static long long
num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

static void
scan_info_parse(json_t *o, struct mem_scan_info *i)
{
	i->objects = num(o, "objects");
	i->bytes = num(o, "bytes");
	i->untracked = num(o, "untracked");
	i->types = num(o, "types");
	i->approximate = json_is_true(json_object_get(o, "approximate"));
	i->cut_short = json_is_true(json_object_get(o, "cut_short"));
	i->python_sizeof = json_is_true(json_object_get(o, "python_sizeof"));
	i->slices = num(o, "slices");
	i->max_hold_ms = json_number_value(json_object_get(o, "max_hold_ms"));
	i->wall_ms = json_number_value(json_object_get(o, "wall_ms"));
}

struct mem_table *
mem_table_parse(json_t *data)
{
	struct mem_table *t = xcalloc(1, sizeof *t);
	json_t *rows = json_object_get(data, "rows"), *r;
	const char *action = json_string_value(json_object_get(data, "action"));
	size_t i;

	t->diff = action != NULL && strcmp(action, "diff") == 0;
	t->interval = json_number_value(json_object_get(data, "interval"));
	scan_info_parse(json_object_get(data, "scan"), &t->scan);
	scan_info_parse(json_object_get(data, "before"), &t->before);
	t->total_types = num(data, "total_types");
	t->rows = xcalloc(json_array_size(rows) + 1, sizeof *t->rows);
	json_array_foreach(rows, i, r) {
		struct mem_row *m = &t->rows[t->nrows++];

		m->type = model_text(r, "type");
		m->count = num(r, "count");
		m->size = num(r, "size");
		m->count_delta = num(r, "count_delta");
		m->size_delta = num(r, "size_delta");
	}
	return t;
}

void
mem_table_free(struct mem_table *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nrows; i++)
		free(t->rows[i].type);
	free(t->rows);
	free(t);
}

static void
frame_parse(json_t *o, struct mem_frame *f)
{
	f->file = model_text(o, "file");
	f->line = num(o, "line");
}

struct mem_sites *
mem_sites_parse(json_t *data)
{
	struct mem_sites *m = xcalloc(1, sizeof *m);
	json_t *rows = json_object_get(data, "rows"), *r, *tb, *fr;
	size_t i, k;

	m->what = model_text(data, "what");
	m->was_tracing = json_is_true(json_object_get(data, "was_tracing"));
	m->ours = json_is_true(json_object_get(data, "ours"));
	m->stopped = json_is_true(json_object_get(data, "stopped"));
	m->shared = json_is_true(json_object_get(data, "shared"));
	m->others = num(data, "others");
	m->one_shot = json_is_true(json_object_get(data, "one_shot"));
	m->frames = num(data, "frames");
	m->total_sites = num(data, "total_sites");
	m->rows = xcalloc(json_array_size(rows) + 1, sizeof *m->rows);
	json_array_foreach(rows, i, r) {
		struct mem_site *s = &m->rows[m->nrows++];

		frame_parse(r, &s->where);
		s->size = num(r, "size");
		s->size_delta = num(r, "size_delta");
		s->count = num(r, "count");
		s->count_delta = num(r, "count_delta");
		tb = json_object_get(r, "traceback");
		s->tb = xcalloc(json_array_size(tb) + 1, sizeof *s->tb);
		json_array_foreach(tb, k, fr)
			frame_parse(fr, &s->tb[s->ntb++]);
	}
	return m;
}

void
mem_sites_free(struct mem_sites *m)
{
	size_t i, k;

	if (m == NULL)
		return;
	for (i = 0; i < m->nrows; i++) {
		free(m->rows[i].where.file);
		for (k = 0; k < m->rows[i].ntb; k++)
			free(m->rows[i].tb[k].file);
		free(m->rows[i].tb);
	}
	free(m->rows);
	free(m->what);
	free(m);
}

void
mem_rss_parse(json_t *data, struct mem_rss *m)
{
	memset(m, 0, sizeof *m);
	m->rss = num(data, "rss");
	m->hwm = num(data, "hwm");
	m->pymalloc = json_is_true(json_object_get(data, "pymalloc"));
	m->arenas = num(data, "arenas");
	m->arena_bytes = num(data, "arena_bytes");
	m->used_bytes = num(data, "used_bytes");
	m->free_bytes = num(data, "free_bytes");
}
