/*
 * model_trace — the events of a `trace` request: the start (what is
 * traced) or one traced call with its call tree.  Parsed from what the
 * agent sent, checked field by field: a missing or mistyped field becomes an
 * empty one, never a crash.  Owns its strings; trace_record_clear frees.
 */
#ifndef FP_MODEL_TRACE_H
#define FP_MODEL_TRACE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* One line of the tree: a callee at one call site, its repeats merged. */
struct trace_node {
	char *name;		/* qualified name of the function or C callable */
	char *file;		/* NULL for C callables */
	long long line;		/* call site in the parent's code; 0: unknown */
	long long def_line;	/* first line of a Python function */
	long long count;	/* calls merged into this line */
	long long total_ns, min_ns, max_ns;
	long long hidden, hidden_ns;	/* calls beneath left out by -i, -d, imports */
	bool c;			/* a C callable */
	bool folded;		/* a front end's: its children are not shown */
	struct trace_node *children;
	size_t nchildren;
};

struct trace_record {
	bool started;
	long long matched;		/* started: methods the pattern matched */
	char **observed;
	size_t nobserved;
	char *mechanism;		/* started: "eval", "profile"; NULL: not said */
	char *mechanism_note;		/* started: why the profile hook, not asked for */
	long long index;		/* from 1 */
	char *method, *thread, *exception, *filter_error;
	double time, cost_ms;
	long long dropped;		/* -1: not said */
	long long unrecorded;		/* calls beyond the recorder's node cap */
	struct trace_node *root;	/* NULL: nothing recorded */
};

void trace_record_parse(json_t *data, struct trace_record *t);
void trace_record_clear(struct trace_record *t);

/* Share of n in its parent's total, in percent (100 for the root). */
double trace_node_share(const struct trace_node *n, const struct trace_node *parent);

#endif
