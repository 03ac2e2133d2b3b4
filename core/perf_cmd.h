/*
 * perf_cmd — the `perf` command: sample a process from outside (core/sampler)
 * and write a flamegraph, collapsed stacks, speedscope JSON or a text
 * table.  The output path is checked before sampling starts; Ctrl-C, the
 * duration or the target's exit ends sampling and what was collected is
 * written.  Never stops a thread of the target (unless --native, which
 * stops each briefly while it is unwound).
 */
#ifndef FP_PERF_CMD_H
#define FP_PERF_CMD_H

#include <stdio.h>

#include "core/command.h"
#include "core/sampler.h"

/*
 * The handler of `perf` in the command table (core/command_table.c); ctx
 * is the runner, whose process is sampled unless the command names one.
 */
cmd_run_fn perf_cmd_run;

/*
 * perf of one process (pid, or the one req names), for the text above
 * and for --json (core/jsonperf): sampled until -d, Ctrl-C or its exit,
 * and written to its file (-f, or the default one with always_write).
 * *o is filled as far as it got; perf_one_clear it in every case.
 */
struct perf_one {
	pid_t pid;
	int format;
	unsigned rate;			/* samples per second asked */
	const char *mode;		/* "wall", "cpu", "gil" */
	const char *file;		/* written; NULL: none */
	struct sampler *s;
	struct profile *prof;
	char *summary;			/* sampler_summary */
};
int perf_profile_one(pid_t pid, const struct cmd_request *req, bool always_write,
    struct perf_one *o, char **cause);
void perf_one_clear(struct perf_one *o);
/*
 * perf over a set for --json: o's profiled hook (core/perfset.h) gets the
 * profile; the rest of o is filled from req.  -f writes its file; without
 * it none is written.
 */
struct perfset_opts;
struct proc_set_spec;
int perf_profile_set(const struct proc_set_spec *spec, const struct cmd_request *req,
    struct perfset_opts *o, char **cause);

struct profile;
/* "svg", "collapsed", "speedscope", "text": its number, or -1. */
int perf_format_named(const char *name);
/* The format a file name asks for by its extension (svg when none). */
int perf_format_of(const char *file);
/* Write `prof` in format `format` (of the two above).  0, or -1 with errno. */
int perf_write(const struct profile *prof, int format, FILE *f, const char *title,
    const char *subtitle);

/*
 * The output file, opened before sampling (a typo loses no samples): an
 * fd, or minus an fp_status with *cause.
 */
int perf_open_output(const char *file, char **cause);
/* Truncate fd's file and write prof into it; fd is closed. */
int perf_write_output(int fd, const struct profile *prof, int format, const char *file,
    const char *title, const char *subtitle, char **cause);
/* The same after sampling ended with rc: written in any case, rc kept if not FP_OK. */
int perf_write_kept(int rc, int fd, const struct profile *prof, int format, const char *file,
    const char *title, const char *subtitle, char **cause);
/* Sample a set in one loop, Ctrl-C ending it (what was collected is kept). */
int perf_sample(struct sampler_set *set, sampler_sink_fn *sink, void *arg, char **cause);
const char *perf_format_name(int format);
const char *perf_mode_name(int mode);

#endif
