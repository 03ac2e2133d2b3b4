/*
 * The writers of core/profile.h that are not the SVG: collapsed stacks,
 * speedscope JSON, the text table.  Frame names were made printable when
 * interned (core/termsafe); here each format escapes its own specials.
 */
#include "config.h"

#include "core/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/* Every frame's label, with what would break `fmt` replaced. */
static char **
labels(const struct profile *p, bool collapsed)
{
	char **l = xcalloc(p->nframes + 1, sizeof *l);
	size_t i;

	for (i = 0; i < p->nframes; i++) {
		char *s = profile_frame_label(&p->frames[i]), *c;

		/* flamegraph.pl splits frames at ';' and the count at the last space. */
		for (c = s; collapsed && *c != '\0'; c++)
			if (*c == ';')
				*c = ',';
		l[i] = s;
	}
	return l;
}

static int
stream_status(FILE *f)
{
	if (ferror(f)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

/*
 * Visit every node depth first (children before siblings), calling
 * fn(node, depth) with p's path of frame ids from the root in path[].
 */
typedef void visit_fn(const struct profile *p, uint32_t node, const uint32_t *path,
    size_t depth, void *arg);

static void
visit(const struct profile *p, visit_fn *fn, void *arg)
{
	uint32_t *path = xmalloc((p->nnodes + 1) * sizeof *path);
	uint32_t node = p->nodes[0].child;
	size_t depth = 0;

	while (node != PROFILE_NONE) {
		const struct profile_node *nd = &p->nodes[node];

		path[depth] = nd->frame;
		fn(p, node, path, depth + 1, arg);
		if (nd->child != PROFILE_NONE) {
			node = nd->child;
			depth++;
			continue;
		}
		while (node != PROFILE_NONE && p->nodes[node].sibling == PROFILE_NONE) {
			node = p->nodes[node].parent;
			if (node == 0)
				node = PROFILE_NONE;
			else
				depth--;
		}
		if (node != PROFILE_NONE)
			node = p->nodes[node].sibling;
	}
	free(path);
}

struct collapsed_ctx {
	FILE *f;
	char **labels;
};

static void
collapsed_one(const struct profile *p, uint32_t node, const uint32_t *path, size_t depth,
    void *arg)
{
	struct collapsed_ctx *c = arg;
	size_t i;

	if (p->nodes[node].self == 0)
		return;
	for (i = 0; i < depth; i++)
		fprintf(c->f, "%s%s", i > 0 ? ";" : "", c->labels[path[i]]);
	fprintf(c->f, " %llu\n", (unsigned long long)p->nodes[node].self);
}

int
profile_write_collapsed(const struct profile *p, FILE *f)
{
	struct collapsed_ctx c = { f, labels(p, true) };

	visit(p, collapsed_one, &c);
	strv_free(c.labels, p->nframes);
	return stream_status(f);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s != NULL && *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

struct speedscope_ctx {
	FILE *f;
	size_t from;		/* path index where this profile's frames begin */
	uint32_t thread;	/* the thread root of this profile, or NONE */
	bool first;
	bool weights;		/* second pass: weights instead of samples */
};

static void
speedscope_one(const struct profile *p, uint32_t node, const uint32_t *path, size_t depth,
    void *arg)
{
	struct speedscope_ctx *c = arg;
	size_t i;

	if (p->nodes[node].self == 0 || depth <= c->from)
		return;
	if (c->thread != PROFILE_NONE && path[0] != c->thread)
		return;
	fputs(c->first ? "" : ",", c->f);
	c->first = false;
	if (c->weights) {
		fprintf(c->f, "%llu", (unsigned long long)p->nodes[node].self);
		return;
	}
	fputc('[', c->f);
	for (i = c->from; i < depth; i++)
		fprintf(c->f, "%s%u", i > c->from ? "," : "", path[i]);
	fputc(']', c->f);
}

static void
speedscope_profile(const struct profile *p, FILE *f, uint32_t thread, const char *name,
    uint64_t total)
{
	struct speedscope_ctx c = { f, thread != PROFILE_NONE ? 1 : 0, thread, true, false };

	fputs("{\"type\":\"sampled\",\"name\":", f);
	json_str(f, name);
	fprintf(f, ",\"unit\":\"none\",\"startValue\":0,\"endValue\":%llu,\"samples\":[",
	    (unsigned long long)total);
	visit(p, speedscope_one, &c);
	fputs("],\"weights\":[", f);
	c.first = true;
	c.weights = true;
	visit(p, speedscope_one, &c);
	fputs("]}", f);
}

/* https://www.speedscope.app/file-format-schema.json: one sampled profile per thread. */
int
profile_write_speedscope(const struct profile *p, FILE *f, const char *title)
{
	uint32_t n;
	size_t i;
	bool first = true;

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"shared\":{\"frames\":[", f);
	for (i = 0; i < p->nframes; i++) {
		const struct profile_frame *fr = &p->frames[i];

		fputs(i > 0 ? ",{\"name\":" : "{\"name\":", f);
		json_str(f, fr->name);
		if (fr->file != NULL) {
			fputs(",\"file\":", f);
			json_str(f, fr->file);
		}
		if (fr->line > 0 && !fr->native)
			fprintf(f, ",\"line\":%d", fr->line);
		fputc('}', f);
	}
	fputs("]},\"profiles\":[", f);
	if (p->by_thread) {
		for (n = p->nodes[0].child; n != PROFILE_NONE; n = p->nodes[n].sibling) {
			fputs(first ? "" : ",", f);
			first = false;
			speedscope_profile(p, f, p->nodes[n].frame, p->frames[p->nodes[n].frame].name,
			    p->nodes[n].total);
		}
	} else {
		speedscope_profile(p, f, PROFILE_NONE, title, p->nodes[0].total);
	}
	fputs("],\"name\":", f);
	json_str(f, title);
	fputs(",\"activeProfileIndex\":0,\"exporter\":\"flight_profiler\"}\n", f);
	return stream_status(f);
}

/* ---- text: own and total per function ------------------------------------ */

struct text_row {
	uint32_t frame;
	uint64_t self, total, self_ns, total_ns;
};

struct text_ctx {
	struct text_row *rows;	/* indexed by frame */
};

static void
text_one(const struct profile *p, uint32_t node, const uint32_t *path, size_t depth, void *arg)
{
	struct text_ctx *c = arg;
	const struct profile_node *nd = &p->nodes[node];
	struct text_row *r = &c->rows[nd->frame];
	size_t i;

	r->self += nd->self;
	r->self_ns += nd->self_ns;
	/* A recursion counts its samples once: only the outermost occurrence adds. */
	for (i = 0; i + 1 < depth; i++)
		if (path[i] == nd->frame)
			return;
	r->total += nd->total;
	r->total_ns += nd->total_ns;
}

static int
cmp_rows(const void *a, const void *b)
{
	const struct text_row *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return (x->frame > y->frame) - (x->frame < y->frame);
}

int
profile_write_text(const struct profile *p, FILE *f, unsigned max_rows)
{
	struct text_ctx c = { xcalloc(p->nframes + 1, sizeof *c.rows) };
	double all = p->nodes[0].total > 0 ? (double)p->nodes[0].total : 1;
	char **l = labels(p, false);
	size_t i, shown = 0;

	for (i = 0; i < p->nframes; i++)
		c.rows[i].frame = (uint32_t)i;
	visit(p, text_one, &c);
	qsort(c.rows, p->nframes, sizeof *c.rows, cmp_rows);
	fprintf(f, "%7s %7s %10s %10s  %s\n", "OWN%", "TOTAL%", "OWN(s)", "TOTAL(s)", "FUNCTION");
	for (i = 0; i < p->nframes && (max_rows == 0 || shown < max_rows); i++) {
		const struct text_row *r = &c.rows[i];

		if (p->frames[r->frame].thread)
			continue;
		fprintf(f, "%6.2f%% %6.2f%% %10.3f %10.3f  %s\n", 100.0 * (double)r->self / all,
		    100.0 * (double)r->total / all, (double)r->self_ns / 1e9,
		    (double)r->total_ns / 1e9, l[r->frame]);
		shown++;
	}
	fprintf(f, "%llu samples\n", (unsigned long long)p->nodes[0].total);
	strv_free(l, p->nframes);
	free(c.rows);
	return stream_status(f);
}
