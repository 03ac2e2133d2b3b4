/*
 * runner_set — the commands that run inside every member of a process set
 * (issue 13): with --all, getglobal, execute, vmtool and mem summary
 * (CMD_SET_ALL in the command table) run in each member in turn, each
 * through a runner of that one process, so that every member is attached
 * with the rules of a single attach and its session is closed after it.
 * The commands that read the set themselves (CMD_SET: stack, perf) never
 * come here.  For core/runner.c only; front ends use core/runner.h.
 */
#ifndef FP_RUNNER_SET_H
#define FP_RUNNER_SET_H

#include "core/command.h"
#include "core/runner.h"
#include "core/util.h"

/*
 * Run req, a command that is not CMD_SET, over r's process set: each
 * member's result under its header ("== pid 4101 python3 pool.py ==")
 * as it comes, through the runner's output (runner_write), then one line
 * of summary in out.  A member that fails is reported in its section and
 * the others still run; the status is then FP_ERR, with *cause naming how
 * many failed.  FP_EUSAGE for a command that does not run over a set, or
 * one that does with --all only and lacks it.
 */
int runner_set_each(struct runner *r, const struct cmd_request *req, struct sbuf *out,
    char **cause);

#endif
