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

#include <sys/types.h>

#include "core/command.h"
#include "core/util.h"

/* `pid` is the attached process (a positional pid overrides it). */
int perf_cmd_run(pid_t pid, const struct cmd_request *req, struct sbuf *out, char **cause);

#endif
