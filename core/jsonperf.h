/*
 * jsonperf — `perf --json`: one "perf_stack" record per distinct stack
 * sampled, with its count, then one "perf" record summing it up
 * (doc/json.md).  -f still writes its file; without -f none is written.
 */
#ifndef FP_JSONPERF_H
#define FP_JSONPERF_H

#include "core/command.h"
#include "core/runner.h"
#include "core/util.h"

int jsonperf_exec(struct runner *r, const struct cmd_request *req, struct sbuf *out,
    char **cause);

#endif
