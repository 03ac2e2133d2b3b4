/*
 * torch — the agent's `torch` command: profile / memory / modules, whose
 * Python lives in torchhelper.py.  Never imports torch into a process that
 * has not (the helper looks in sys.modules only), and removes every hook
 * it put in before its request ends.
 */
#ifndef FP_AGENT_TORCH_H
#define FP_AGENT_TORCH_H

#include <jansson.h>

#include "inject/agent/agent.h"

/* args: {"action": "profile"|"memory"|"modules", ...}; the end to send. */
json_t *agent_torch_run(struct agent_job *job);

#endif
