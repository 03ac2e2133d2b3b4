/*
 * gilstat — per-thread GIL accounting and the reports of `gilstat on`
 * (seeds/002: `gil statistics report:` and `gil warning report:`).
 *
 * Two sources, never mixed in one run: exact events from core/gilprobe
 * (every take_gil/drop_gil entry and return), or samples of each thread's
 * GIL state read from outside (holds / waits / neither) where the
 * interpreter has no symbols to probe.  The statistical report says so in
 * its header and shows what samples can tell (hold %, wait %, longest
 * observed hold), not counts it cannot know.  Holds only the numbers;
 * reading the process is the caller's.
 */
#ifndef FP_GILSTAT_H
#define FP_GILSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "core/gilprobe.h"
#include "core/pystack.h"
#include "core/util.h"

struct gilstat_opts {
	uint64_t take_ns;	/* warn for takes that waited longer; 0 = never */
	uint64_t hold_ns;	/* warn for holds longer; 0 = never */
	unsigned max_threads;	/* threads in each report (the most holding first) */
};

struct gilstat;

struct gilstat *gilstat_new(const struct gilstat_opts *opts, bool exact);
void gilstat_free(struct gilstat *gs);

/* Exact: one probe event. */
void gilstat_event(struct gilstat *gs, const struct gilprobe_event *ev);
/* Statistical: thread `tid` was in `state` at `time_ns`, standing for `weight_ns`. */
void gilstat_sample(struct gilstat *gs, pid_t tid, enum py_gil_state state,
    uint64_t time_ns, uint64_t weight_ns);
/* The name shown for `tid` (the target's: escaped when shown). */
void gilstat_name(struct gilstat *gs, pid_t tid, const char *name);

/*
 * `gil statistics report:` with `header` after it (what was measured
 * and how), one line per thread, totals since `gilstat on`.
 */
void gilstat_report(struct gilstat *gs, const char *header, struct sbuf *out);
/*
 * `gil warning report:` and the takes/holds over the thresholds since the
 * last call (at most a screenful; the rest counted); nothing when none.
 */
void gilstat_warnings(struct gilstat *gs, struct sbuf *out);
/*
 * The same as JSON, for --json (core/jsonrec adds type and version): the
 * report's {"exact", "threads": [...], "more"}, and the warnings since
 * the last call as an array (empty when none; "more" counted in *more).
 */
json_t *gilstat_report_json(struct gilstat *gs);
json_t *gilstat_warnings_json(struct gilstat *gs, uint64_t *more);

#endif
