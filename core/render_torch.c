#include "config.h"

#include "core/render_torch.h"

#include <string.h>

#include "core/termsafe.h"

#define NAME_WIDTH 36

static const char *
str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "?";
}

static double
num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* "+1.25 MB" (1024-based, signed); "-" where nothing measured it. */
static void
mem_cell(char *buf, size_t n, const struct torch_row *r)
{
	static const char *const units[] = { "B", "KB", "MB", "GB" };
	long long bytes = r->mem;
	double x = (double)(bytes < 0 ? -bytes : bytes);
	int u = 0;

	if (!r->has_mem) {
		snprintf(buf, n, "-");
		return;
	}
	while (x >= 1024 && u < 3) {
		x /= 1024;
		u++;
	}
	snprintf(buf, n, "%s%.*f %s", bytes < 0 ? "-" : "+", u ? 2 : 0, x, units[u]);
}

void
render_torch_waiting(struct sbuf *out, const char *cmd, json_t *ev)
{
	if (!json_is_string(json_object_get(ev, "waiting")))
		return;
	if (strcmp(str(ev, "what"), "steps") == 0)
		termsafe_addf(out, "%s: %lld modules hooked; waiting for %lld steps of %s (up to "
		    "%g s; Ctrl-C stops early)\n", cmd,
		    (long long)json_integer_value(json_object_get(ev, "modules")),
		    (long long)json_integer_value(json_object_get(ev, "steps")), str(ev, "waiting"),
		    num(ev, "timeout"));
	else
		termsafe_addf(out, "%s: waiting for the next call of %s (up to %g s; Ctrl-C "
		    "cancels)\n", cmd, str(ev, "waiting"), num(ev, "timeout"));
}

void
render_torch_written(struct sbuf *out, const char *cmd, json_t *d)
{
	bool profile = json_object_get(d, "events") != NULL;

	if (json_is_string(json_object_get(d, "method")))
		termsafe_addf(out, "%s: %s took %.3f ms%s%s\n", cmd, str(d, "method"),
		    num(d, "call_ms"), json_is_string(json_object_get(d, "exception")) ?
		    " and raised " : "", json_is_string(json_object_get(d, "exception")) ?
		    str(d, "exception") : "");
	if (profile)
		termsafe_addf(out, "%s: %lld events (CPU%s) written to %s (%lld bytes): open it in "
		    "chrome://tracing or https://ui.perfetto.dev\n", cmd,
		    (long long)json_integer_value(json_object_get(d, "events")),
		    json_is_true(json_object_get(d, "cuda")) ? " and CUDA" : "; no CUDA in this "
		    "process", str(d, "file"), (long long)json_integer_value(json_object_get(d, "bytes")));
	else
		termsafe_addf(out, "%s: %s written to %s (%lld bytes): open it in "
		    "https://pytorch.org/memory_viz\n", cmd, strcmp(str(d, "mode"), "record") == 0 ?
		    "the allocations of the call" : "a snapshot of the CUDA memory", str(d, "file"),
		    (long long)json_integer_value(json_object_get(d, "bytes")));
}

static void
modules_header(struct sbuf *out, const struct torch_modules *t)
{
	termsafe_addf(out, "torch modules: %lld step%s of %s (a step: one call of the largest "
	    "module tree, to the next), %.3f ms a step on average%s\n", t->steps,
	    t->steps == 1 ? "" : "s", t->root, t->step_avg_ms, t->steps < t->steps_asked ?
	    " (FEWER than asked: stopped or timed out)" : "");
	termsafe_addf(out, "memory: %s; the change over each forward / backward\n\n", t->memory);
	sbuf_addf(out, "%*s | %-8s | %6s | %10s | %10s | %6s | %11s\n", NAME_WIDTH, "MODULE",
	    "STAGE", "CALLS", "AVG ms", "TOTAL ms", "STEP %", "MEMORY");
}

void
render_torch_modules(struct sbuf *out, const struct torch_modules *t)
{
	struct sbuf name = { 0 };
	char mem[32];
	size_t i;

	modules_header(out, t);
	for (i = 0; i < t->nrows; i++) {
		const struct torch_row *r = &t->rows[i];

		sbuf_free(&name);
		termsafe_adds(&name, r->module, TERMSAFE_FIELD);
		if (name.len < NAME_WIDTH)
			sbuf_addf(out, "%*s", (int)(NAME_WIDTH - name.len), "");
		sbuf_add(out, name.s ? name.s : "");
		mem_cell(mem, sizeof mem, r);
		sbuf_addf(out, " | %-8s | %6lld | %10.3f | %10.3f | %5.1f%% | %11s\n",
		    r->backward ? "backward" : "forward", r->calls, r->avg_ms, r->total_ms, r->share,
		    mem);
	}
	sbuf_free(&name);
}
