/*
 * jsonout — `--json --cmd COMMAND`: the command's result as records
 * (core/jsonrec, doc/json.md), one JSON object per line, instead of text.
 * `stack` (one process or a set, --group or not) writes its own records;
 * the commands flagged CMD_JSON_ANSWER one "answer" record carrying the
 * agent's JSON; those flagged CMD_JSON_STREAM an "event" record per event
 * as it comes, then an "end" (core/jsonstream); perf its stacks
 * (core/jsonperf), gilstat on its reports, help the command list.  A
 * command that has no records fails before it runs, with one line: never
 * half JSON, half text.
 */
#ifndef FP_JSONOUT_H
#define FP_JSONOUT_H

#include "core/runner.h"
#include "core/util.h"

/* Run line on r, its records into out; an enum fp_status with *cause. */
int jsonout_exec(struct runner *r, const char *line, struct sbuf *out, char **cause);
/* --json --cmd: the records on standard output, or one line on standard error. */
int jsonout_main(struct runner *r, const char *line);

#endif
