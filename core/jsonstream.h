/*
 * jsonstream — --json for the commands that stream events (CMD_JSON_STREAM:
 * watch, trace, tt, monitor, torch): one "event" record per event the
 * agent sent, printed as it arrives (flushed line by line: a script
 * reading a pipe sees them live), then one "end" record saying how the
 * command ended (doc/json.md).
 */
#ifndef FP_JSONSTREAM_H
#define FP_JSONSTREAM_H

#include <stdbool.h>
#include <stdio.h>

#include "core/runner.h"
#include "core/util.h"

/*
 * A runner_io that reads no input and writes nothing: what --json runs a
 * command with (the records say what its text would), and leaves the
 * runner with afterwards (the runner keeps no pointer to a caller's).
 */
extern const struct runner_io jsonstream_quiet;

/*
 * Run line (command `name`) on r.  Records go to `live` as they come when
 * it is not NULL, else into out.  *keep: records were made (the end
 * record carries a failure; print them even when rc is not FP_OK).
 */
int jsonstream_exec(struct runner *r, const char *name, const char *line, FILE *live,
    struct sbuf *out, bool *keep, char **cause);

#endif
