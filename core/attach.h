/*
 * attach — the one way a command gets a session with the agent of a
 * process: connect to the agent already running there, or load it.
 *
 * The agent lives in /tmp/.flight_profiler-<pid> inside the target's mount
 * namespace (reached through /proc/<pid>/root; <pid> as this process sees
 * it): a 0700 directory owned by the target's uid holding fpagent-cp3XY.so,
 * the libjansson.so.4 it needs and, once it runs, agent.sock (0600).
 * Loading copies both libraries there and has the loader (below) load that
 * path, so a container without jansson or flight_profiler works.
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

/*
 * How the agent gets into a process that runs none: the injectors of
 * inject/ (inject/loader.h), handed in once by the program's main through
 * attach_set_loader().  core/ never includes inject/, which uses core/
 * (DESIGN.md §1); a program that sets no loader can only connect.
 */
struct attach_loader {
	/*
	 * ptrace at a safe point: load `lib` into pid and call its
	 * `symbol`(arg); with `loaded`, the library is already mapped under
	 * that name (a forked child's inherited agent) and only its
	 * bootstrap is called again.  An enum fp_status with *cause.
	 */
	int (*inject)(pid_t pid, const char *lib, const char *symbol, const char *arg,
	    bool loaded, char **cause);
	/* PEP 768: whether this interpreter version has it (3.14+). */
	bool (*pep768_applies)(unsigned python_hex);
	/* Why pid refuses remote debugging (malloc'd, never bypassed), or NULL. */
	char *(*pep768_refusal)(pid_t pid);
	/* The bootstrap script's Python source: load lib, call its start(dir). */
	char *(*pep768_source)(const char *dir, const char *lib);
	/*
	 * Ask pid's interpreter to run `script` and wait up to take_ms for it
	 * to take the request: FP_OK once taken (it runs).  On failure
	 * *fallback says whether the ptrace injector may still be tried:
	 * never after a refusal, nor once the script may run.
	 */
	int (*pep768_run)(pid_t pid, const char *script, int take_ms, bool *fallback,
	    char **cause);
};

/* The loader attach_agent(ATTACH_LOAD) uses; set once, before any attach. */
void attach_set_loader(const struct attach_loader *loader);

enum attach_mode {
	ATTACH_EXISTING,	/* only connect to an agent already running */
	ATTACH_IF_RUNNING,	/* as EXISTING, but none running is FP_OK with *s NULL */
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
