/*
 * attach — the one way a command gets a session with the agent of a
 * process: connect to the agent already running there, or load it.
 *
 * The agent lives in /tmp/.flight_profiler-<pid> inside the target's mount
 * namespace (reached through /proc/<pid>/root; <pid> as this process sees
 * it): a 0700 directory owned by the target's uid holding fpagent-cp3XY.so,
 * the libjansson.so.4 it needs and, once it runs, agent.sock (0600).
 * Loading copies both libraries there and injects that path (inject/), so
 * a container without jansson or flight_profiler works.
 *
 * Never loads the agent twice: a running agent answers on its socket; a
 * stale socket is cleaned and the agent re-loaded only when no agent
 * library is mapped in the process.
 */
#ifndef FP_ATTACH_H
#define FP_ATTACH_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/session.h"

enum attach_mode {
	ATTACH_EXISTING,	/* only connect to an agent already running */
	ATTACH_LOAD,		/* connect, or load the agent if there is none */
};

/*
 * *s is a session with the agent of pid.  Returns an enum fp_status; with
 * ATTACH_EXISTING and no agent running, FP_ERR and *cause says so.
 * `python_hex` (PY_VERSION_HEX, 0 if unknown) saves reading the version
 * again when the caller knows it.
 */
int attach_agent(pid_t pid, enum attach_mode mode, unsigned python_hex,
    struct session **s, char **cause);

/* The directory of the agent files, for the agent (inside the target). */
char *attach_target_dir(pid_t pid);

/*
 * Where this flight_profiler finds fpagent-cp3<minor>.so: $FP_AGENT_DIR,
 * else next to the binary (the build tree), else the install's pkglibdir.
 * Malloc'd path, or NULL with *cause naming what is missing.
 */
char *attach_find_agent(unsigned minor, char **cause);

#endif
