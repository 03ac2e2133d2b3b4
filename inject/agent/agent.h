/*
 * agent — what flight_profiler loads into a live CPython process.
 *
 * One exported symbol, fp_agent_start(dir) (see agent.map): it starts a
 * detached thread with every signal blocked and returns at once.  That
 * thread serves a Unix socket in `dir` WITHOUT the GIL (server.c); requests
 * that need the interpreter run on a small pool of worker threads that take
 * the GIL only around their work (pyside.c), so a statement that never
 * returns blocks one worker, never the socket, a ping, or a cancel.
 *
 * Must never: run Python or take the GIL in the constructor or in
 * fp_agent_start; write to the target's stdout/stderr; let an exception
 * escape into the application; abort or exit the process on any input.
 */
#ifndef FP_AGENT_H
#define FP_AGENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#define AGENT_MAX_WORKERS 8

struct agent_job {
	struct agent_job *next;
	uint64_t conn;		/* serial number of the connection that asked */
	uint64_t id;		/* its request id; 0 for internal jobs */
	char *cmd;
	json_t *args;		/* owned */
	bool stmt;		/* execute, console: may never return */
	bool taken;		/* by a worker: no longer queued */
	bool running;
	bool done;
	bool cancelled;		/* by the client, or because it disconnected */
	bool left_python;	/* past its last use of the interpreter (agent_job_left_python) */
	unsigned long ident;	/* the worker's thread ident while running */
};

/* ---- server.c: callable from any thread, never blocks on the network ---- */

/* Queue a message for a connection (steals msg; dropped if it is gone). */
void agent_send(uint64_t conn, json_t *msg);
/* The process id as the client sees it (from the directory name). */
pid_t agent_host_pid(void);
/*
 * Around the program's fork() (forkhooks.c): stop our threads so that the
 * process is as single-threaded as the program left it, then start them
 * again with the same socket and connections.  Both are no-ops when the
 * agent does not serve in this process.
 */
void agent_park(void);
void agent_resume(void);

/* ---- jobs.c ---- */

/* Under the GIL, by the worker: the job runs / has finished. */
void agent_job_mark_running(struct agent_job *job, unsigned long ident);
void agent_job_mark_done(struct agent_job *job);
bool agent_job_is_cancelled(struct agent_job *job);
/*
 * By the worker, the GIL released for good, before the end is sent: a
 * park waits for it (a client that got its end may make the program
 * fork at once, and the worker still has to leave).
 */
void agent_job_left_python(struct agent_job *job);
/* The thread ident of the worker running (conn, id), if it still runs. */
bool agent_job_running_ident(uint64_t conn, uint64_t id, unsigned long *ident);

/* ---- pyside.c ---- */

/* The interpreter is initialized and not finalizing (no GIL needed). */
bool agent_py_ready(void);
/* "3.12.1" from the running interpreter (no GIL needed). */
const char *agent_py_version(void);
/* Run one request: takes the GIL, sends its events and its end. */
void agent_py_run(struct agent_job *job);
/* Forget what a closed connection kept (its console namespace). */
void agent_py_drop_conn(uint64_t conn);
/* In a child of os.fork(), GIL held: remove every instrumentation (watch,
 * trace, tt, monitor), whose clients are the parent's. */
void agent_py_child_reset(void);
/* Raise KeyboardInterrupt in the worker running (conn, id): best effort. */
void agent_py_interrupt(uint64_t conn, uint64_t id);
/*
 * The agent's command table: one entry per command a client may send,
 * driving both the hello's capabilities and dispatch.
 */
struct agent_command {
	const char *name;
	json_t *(*run)(struct agent_job *job);	/* under the GIL: the end to send */
	bool statement;		/* runs the client's code, which may never return */
	bool keeps;		/* may leave state of its connection behind (hooks, a
				 * console, a mem session): the connection's close
				 * queues a drop, which needs the GIL */
};
/* The entry that runs `name`, or NULL when no worker runs it. */
const struct agent_command *agent_command_find(const char *name);
/* Every entry's name, for the hello (a new JSON array). */
json_t *agent_capabilities(void);

/* ---- forkhooks.c ---- */

/* Register agent_park/agent_resume with os.register_at_fork, once (takes the GIL). */
void agent_py_install_fork_hooks(void);

#endif
