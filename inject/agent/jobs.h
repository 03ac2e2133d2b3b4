/*
 * jobs — the agent's request queue and the worker threads that run it.
 *
 * Requests wait in one bounded queue and are handed to workers round-robin
 * between connections, so a client with a hundred requests queued does not
 * starve another with one.  "busy" is the answer only when waiting would be
 * pointless or unbounded: every worker is taken by a statement (execute,
 * console: code that may never return), or the queue is full.
 *
 * Workers are joinable and counted: jobs_park() makes the idle ones exit
 * (before the program's fork(), see forkhooks.c), jobs_resume() lets new
 * ones start on demand.  Nothing here takes the GIL; pyside.c does, inside
 * the job.  Must never: block the socket loop on a worker, leave a thread
 * unjoined, or run a queued request that was cancelled.
 */
#ifndef FP_AGENT_JOBS_H
#define FP_AGENT_JOBS_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

/* Requests waiting for a worker: per connection, and in all. */
#define JOBS_MAX_QUEUED_PER_CONN 64
#define JOBS_MAX_QUEUED 256

/*
 * Queue a request of connection `conn` (args borrowed).  id 0 is an
 * internal job (cmd "__drop": forget a closed connection; "__hooks":
 * install the fork hooks), never refused.  A refusal is sent as the
 * request's end.
 */
void jobs_submit(uint64_t conn, uint64_t id, const char *cmd, json_t *args);

/*
 * Cancel one request (id != 0) or every request of a connection (id == 0,
 * when it closed): queued ones end without running ("cancelled before it
 * started", not sent when the connection is gone); running ones are
 * interrupted and their worker sends the end.
 */
void jobs_cancel(uint64_t conn, uint64_t id);

/*
 * Make the idle workers exit and join them, bounded in time; a worker in
 * the middle of a request goes on.  Requests that arrive meanwhile queue.
 */
void jobs_park(void);
/* Undo jobs_park(): workers start again for what is queued. */
void jobs_resume(void);
/*
 * The ids of connection conn's requests a worker runs now (holding or
 * waiting for the GIL), as a new JSON array: what a pong reports.
 */
json_t *jobs_running_ids(uint64_t conn);
/* In a forked child, inside fork(): the workers do not exist here. */
void jobs_forget(void);

/*
 * Join a thread of ours, then wait (bounded) until the kernel has released
 * its task: pthread_join() returns when the thread's tid is cleared, a
 * moment before the task leaves the count of /proc/self/stat that CPython
 * reads to decide whether fork() warns.
 */
void jobs_join_thread(pthread_t thread, pid_t tid);

/* The calling thread's kernel id. */
pid_t jobs_gettid(void);

#endif
