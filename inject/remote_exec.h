/*
 * remote_exec — PEP 768 (CPython 3.14+) from C: ask one thread of a live
 * interpreter to run a Python file at its next eval-breaker check, by
 * writing the request into its thread state with process_vm_writev, as
 * sys.remote_exec() does.  Nothing is stopped, traced or hijacked: the
 * interpreter runs the file itself, holding the GIL, at a point where
 * running Python is safe.
 *
 * It must never work around a target that asked not to be debugged:
 * PYTHON_DISABLE_REMOTE_DEBUG in its environment or -X disable-remote-debug
 * on its command line is a refusal (REMOTE_EXEC_REFUSED) that callers
 * report and must not bypass with another injector.  It is never used
 * below 3.14 (remote_exec_applies()), whose interpreters ignore the
 * request fields.
 *
 * Not tested against a live 3.14 on the machines this was written on
 * (none had one): the parts that need no target are unit-tested.
 */
#ifndef FP_REMOTE_EXEC_H
#define FP_REMOTE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum remote_exec_result {
	REMOTE_EXEC_SENT = 0,		/* the request is in place */
	REMOTE_EXEC_REFUSED,		/* its owner disabled remote debugging: do not bypass */
	REMOTE_EXEC_UNAVAILABLE,	/* PEP 768 cannot be used here; another way may */
};

/* One request written into one thread state. */
struct remote_exec_request {
	pid_t pid;
	pid_t tid;		/* the OS thread asked, 0 if unknown */
	uint64_t tstate;	/* its PyThreadState */
	uint64_t pending;	/* address of its debugger_pending_call */
	char why_thread[64];	/* "holds the GIL", "main thread", for messages */
};

/* True for the versions that implement PEP 768: CPython 3.14 and later. */
bool remote_exec_applies(uint32_t python_hex);

/*
 * Does this environment block (NUL-separated, as /proc/<pid>/environ)
 * disable remote debugging?  PYTHON_DISABLE_REMOTE_DEBUG set to a
 * non-empty value does (CPython ignores an empty one).
 */
bool remote_exec_env_disables(const char *environ, size_t len);

/*
 * Does this command line (NUL-separated, as /proc/<pid>/cmdline) pass
 * -X disable-remote-debug to the interpreter?  Only options before the
 * script, -c or -m count, as CPython parses them.
 */
bool remote_exec_cmdline_disables(const char *cmdline, size_t len);

/*
 * Why process pid refuses remote debugging (a malloc'd sentence saying
 * how to allow it), or NULL when it does not.  A process whose environment
 * cannot be read is taken as refusing: its wish cannot be checked.
 */
char *remote_exec_refusal(pid_t pid);

/*
 * Does `path` fit a script path buffer of `size` bytes (NUL included) and
 * is it absolute?  Returns an enum fp_status with *cause.
 */
int remote_exec_check_path(const char *path, int64_t size, char **cause);

/*
 * Write the request to run `script_path` (a path valid inside the target's
 * mount namespace, readable by it) into a thread of process pid: the one
 * holding the GIL if any (it runs bytecode soonest), else the main thread.
 * On REMOTE_EXEC_SENT *req describes it; otherwise *cause says why.
 */
enum remote_exec_result remote_exec_send(pid_t pid, const char *script_path,
    struct remote_exec_request *req, char **cause);

/*
 * Wait up to timeout_ms for the interpreter to take the request (it
 * clears debugger_pending_call before it runs the file).  FP_OK once
 * taken; FP_EEXITED; FP_ERR with *cause on a timeout.  A thread blocked in
 * a C call never takes it: nothing evaluates its eval breaker.
 */
int remote_exec_wait_taken(const struct remote_exec_request *req, int timeout_ms,
    char **cause);

/*
 * Withdraw a request not taken yet (debugger_pending_call back to 0).
 * True if it was still pending and is withdrawn.  The interpreter may take
 * it in the instant between the check and the write: the file must be
 * harmless to run late (the agent's bootstrap starts once only).
 */
bool remote_exec_retract(const struct remote_exec_request *req);

/*
 * The Python source of the agent bootstrap: load `lib` with ctypes and
 * call its fp_agent_start(dir); on failure write the reason to
 * <dir>/bootstrap.err and print nothing.  Malloc'd.
 */
char *remote_exec_bootstrap_source(const char *dir, const char *lib);

#endif
