/*
 * mem — the agent's `mem` command: summary and diff by type (memscan.c),
 * allocation sites through tracemalloc and the process's RSS against the
 * Python allocator (memhelper.py).  Runs under the GIL on a worker, which
 * it releases between scan slices and while a diff waits.
 */
#ifndef FP_AGENT_MEM_H
#define FP_AGENT_MEM_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <jansson.h>

#include "inject/agent/agent.h"

/* args: {"action": "summary"|"diff"|"sites"|"rss", ...}; the end to send. */
json_t *agent_mem_run(struct agent_job *job);
/*
 * Under the GIL: connection `conn` closed (also when its client was
 * killed); the tracemalloc session it started ends (memhelper.py).
 */
void agent_mem_drop_conn(uint64_t conn);
/*
 * PyGILState_Ensure for the agent's own threads: never while `mem sites`
 * starts or stops tracemalloc (see mem.c: a CPython race before 3.13).
 */
PyGILState_STATE agent_mem_gil_ensure(void);

#endif
