/*
 * runner_int — what the runner's own files (core/runner*.c) share: the
 * one-request call to the agent and the message of a failed end.  Not for
 * front ends.
 */
#ifndef FP_RUNNER_INT_H
#define FP_RUNNER_INT_H

#include <jansson.h>
#include <sys/types.h>

#include "core/protocol.h"
#include "core/runner.h"

/* Send cmd (steals args), wait for its end (no events); loads the agent if needed. */
int runner_call(struct runner *r, const char *cmd, json_t *args, int timeout_ms,
    struct proto_msg *end, char **cause);
/* The status and "cmd: message" of a failed end. */
int runner_end_failure(const struct proto_msg *end, const char *cmd, char **cause);

#endif
