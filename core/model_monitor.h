/*
 * model_monitor — the events of a `monitor` request as typed rows, and
 * their plain text: the start (what is observed, the cycle) and, per cycle
 * and observed function, calls, successes, failures, failure rate and
 * average / min / max / p99 cost.  Everything the agent sent is checked: a
 * missing or mistyped field becomes zero or absent, never a crash; names
 * from the target are escaped when rendered.
 */
#ifndef FP_MODEL_MONITOR_H
#define FP_MODEL_MONITOR_H

#include <jansson.h>
#include <stdbool.h>

#include "core/util.h"

struct monitor_row {
	bool started;		/* the start event: observed, matched, cycle_s */
	char **observed;	/* NULL-terminated; started only */
	size_t nobserved;
	long long matched;
	double cycle_s;
	double time;		/* seconds since the epoch, at the end of the cycle */
	char *method;
	long long cycle;	/* 1, 2, ... */
	long long calls, success, failed, dropped;
	double fail_rate;	/* percent */
	bool has_cost;		/* false when there were no calls */
	double avg_ms, min_ms, max_ms, p99_ms;
};

void monitor_row_parse(json_t *data, struct monitor_row *m);
void monitor_row_clear(struct monitor_row *m);
/* The start's lines, or one table row (with the header before cycle 1's first row). */
void monitor_row_render(struct sbuf *out, const struct monitor_row *m, bool header);

#endif
