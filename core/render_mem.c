#include "config.h"

#include "core/render_mem.h"

#include <stdlib.h>
#include <string.h>

#include "core/termsafe.h"

#define TYPE_WIDTH 40

void
render_mem_size(char *buf, size_t n, long long bytes, bool sign)
{
	static const char *const units[] = { "B", "KB", "MB", "GB", "TB" };
	double v = (double)(bytes < 0 ? -bytes : bytes);
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, n, "%s%.*f %s", bytes < 0 ? "-" : sign && bytes > 0 ? "+" : "",
	    u ? 2 : 0, v, units[u]);
}

static void
header(struct sbuf *out, const struct mem_table *t)
{
	const struct mem_scan_info *s = &t->scan;
	char size[32];

	render_mem_size(size, sizeof size, s->bytes, false);
	if (t->diff)
		sbuf_addf(out, "mem diff over %.1f s: %lld types changed\n", t->interval, t->total_types);
	sbuf_addf(out, "%lld objects, %s in %lld types%s\n", s->objects, size, s->types,
	    s->approximate || t->before.approximate ?
	    " (approximate: objects changed while the scan let the program run)" : "");
	sbuf_addf(out, "counted: objects the garbage collector tracks, and the untracked objects "
	    "they refer to directly (%lld: ints, strs...), each once; sizes as sys.getsizeof%s\n",
	    s->untracked, s->python_sizeof ? " (types with a Python __sizeof__: basic size)" : "");
	sbuf_addf(out, "scan: %.0f ms in %lld slices, longest GIL hold %.1f ms%s\n\n",
	    s->wall_ms, s->slices, s->max_hold_ms, s->cut_short || t->before.cut_short ?
	    "; CUT SHORT: the program allocated faster than the scan read, not every object "
	    "was seen" : "");
}

static void
type_cell(struct sbuf *out, const char *type)
{
	struct sbuf name = { 0 };
	size_t len;

	termsafe_adds(&name, type, TERMSAFE_FIELD);
	len = name.len;
	if (len < TYPE_WIDTH)
		sbuf_addf(out, "%*s", (int)(TYPE_WIDTH - len), "");
	sbuf_add(out, name.s ? name.s : "");
	sbuf_free(&name);
}

void
render_mem_table(struct sbuf *out, const struct mem_table *t)
{
	char size[32], delta[32];
	size_t i;

	header(out, t);
	if (t->diff)
		sbuf_addf(out, "%*s | %11s | %11s | %12s | %12s\n", TYPE_WIDTH, "types", "# objects",
		    "Δ # objects", "total size", "Δ total size");
	else
		sbuf_addf(out, "%*s | %11s | %12s\n", TYPE_WIDTH, "types", "# objects", "total size");
	sbuf_addf(out, "%.*s\n", t->diff ? TYPE_WIDTH + 60 : TYPE_WIDTH + 30,
	    "===================================================================================="
	    "====================================================================================");
	for (i = 0; i < t->nrows; i++) {
		const struct mem_row *r = &t->rows[i];

		type_cell(out, r->type);
		render_mem_size(size, sizeof size, r->size, false);
		if (t->diff) {
			render_mem_size(delta, sizeof delta, r->size_delta, true);
			sbuf_addf(out, " | %11lld | %+11lld | %12s | %12s\n", r->count, r->count_delta,
			    size, delta);
		} else {
			sbuf_addf(out, " | %11lld | %12s\n", r->count, size);
		}
	}
	if (t->nrows == 0)
		sbuf_add(out, t->diff ? "(nothing changed)\n" : "(no objects)\n");
}

static void
render_site(struct sbuf *out, const struct mem_site *s)
{
	char size[32], delta[32];
	size_t k;

	render_mem_size(size, sizeof size, s->size, false);
	render_mem_size(delta, sizeof delta, s->size_delta, true);
	sbuf_addf(out, "%12s | %+9lld | %12s | %9lld | ", delta, s->count_delta, size, s->count);
	termsafe_addf(out, "%s:%lld\n", s->where.file, s->where.line);
	for (k = 1; k < s->ntb; k++) {
		sbuf_addf(out, "%*s", 54, "");
		termsafe_addf(out, "  from %s:%lld\n", s->tb[k].file, s->tb[k].line);
	}
}

void
render_mem_sites(struct sbuf *out, const struct mem_sites *m)
{
	size_t i;

	if (strcmp(m->what, "start") == 0) {
		if (m->shared)
			sbuf_addf(out, "tracemalloc already running for another flight_profiler client "
			    "(%lld frames); it stops when the last of us stops or leaves\n", m->frames);
		else if (m->was_tracing)
			sbuf_addf(out, "tracemalloc was already running (%lld frames): left as the "
			    "program set it; `mem sites diff` compares against a snapshot taken now\n",
			    m->frames);
		else
			sbuf_addf(out, "tracemalloc started (%lld frames per allocation); `mem sites "
			    "diff` shows what grew since now, `mem sites stop` (or leaving) stops it\n",
			    m->frames);
		return;
	}
	if (strcmp(m->what, "stop") == 0) {
		if (m->stopped)
			sbuf_add(out, "tracemalloc stopped\n");
		else if (m->others > 0)
			sbuf_addf(out, "tracemalloc left running for %lld other flight_profiler "
			    "client(s)\n", m->others);
		else
			sbuf_add(out, "tracemalloc left running, as the program had started it\n");
		return;
	}
	sbuf_addf(out, "allocation sites since %s: %lld changed (tracemalloc, %lld frames%s)\n\n",
	    m->one_shot ? "the start of this command (started and stopped around it)" :
	    "`mem sites start`", m->total_sites, m->frames, m->ours ? "" : ", the program's own");
	sbuf_addf(out, "%12s | %9s | %12s | %9s | %s\n", "Δ size", "Δ count", "size", "count",
	    "file:line");
	for (i = 0; i < m->nrows; i++)
		render_site(out, &m->rows[i]);
	if (m->nrows == 0)
		sbuf_add(out, "(nothing changed)\n");
}

void
render_mem_rss(struct sbuf *out, const struct mem_rss *m)
{
	char rss[32], hwm[32], arenas[32], used[32], avail[32], gap[32];

	render_mem_size(rss, sizeof rss, m->rss, false);
	render_mem_size(hwm, sizeof hwm, m->hwm, false);
	sbuf_addf(out, "RSS              %12s   (peak %s)\n", rss, hwm);
	if (!m->pymalloc) {
		sbuf_add(out, "pymalloc is not in use in this process (PYTHONMALLOC=malloc or a "
		    "debug allocator): no arenas to compare\n");
		return;
	}
	render_mem_size(arenas, sizeof arenas, m->arena_bytes, false);
	render_mem_size(used, sizeof used, m->used_bytes, false);
	render_mem_size(avail, sizeof avail, m->free_bytes, false);
	render_mem_size(gap, sizeof gap, m->rss - m->arena_bytes, false);
	sbuf_addf(out, "pymalloc arenas  %12s   (%lld arenas: %s in blocks in use, %s free "
	    "in them)\n", arenas, m->arenas, used, avail);
	sbuf_addf(out, "gap              %12s   RSS outside pymalloc's arenas: objects over 512 "
	    "bytes and other malloc, C extensions, the interpreter's code and stacks, "
	    "fragmentation\n", gap);
}
