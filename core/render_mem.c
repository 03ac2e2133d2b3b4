#include "config.h"

#include "core/render_mem.h"

#include <stdlib.h>
#include <string.h>

#include "core/termsafe.h"

#define TYPE_WIDTH 40

/* "1.23 MB" as pympler writes it (1024-based); signed for a diff. */
static void
human_size(char *buf, size_t n, long long bytes, bool sign)
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

	human_size(size, sizeof size, s->bytes, false);
	if (t->diff)
		sbuf_addf(out, "mem diff over %.1f s: %lld types changed\n", t->interval, t->total_types);
	sbuf_addf(out, "%lld objects, %s in %lld types%s\n", s->objects, size, s->types,
	    s->approximate || t->before.approximate ?
	    " (approximate: objects changed while the scan let the program run)" : "");
	sbuf_addf(out, "counted: objects the garbage collector tracks, and the untracked objects "
	    "they refer to directly (%lld: ints, strs...), each once; sizes as sys.getsizeof%s\n",
	    s->untracked, s->python_sizeof ? " (types with a Python __sizeof__: basic size)" : "");
	sbuf_addf(out, "scan: %.0f ms in %lld slices, longest GIL hold %.1f ms\n\n",
	    s->wall_ms, s->slices, s->max_hold_ms);
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
		human_size(size, sizeof size, r->size, false);
		if (t->diff) {
			human_size(delta, sizeof delta, r->size_delta, true);
			sbuf_addf(out, " | %11lld | %+11lld | %12s | %12s\n", r->count, r->count_delta,
			    size, delta);
		} else {
			sbuf_addf(out, " | %11lld | %12s\n", r->count, size);
		}
	}
	if (t->nrows == 0)
		sbuf_add(out, t->diff ? "(nothing changed)\n" : "(no objects)\n");
}
