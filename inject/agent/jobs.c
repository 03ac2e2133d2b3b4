/*
 * jobs — the request queue and its workers (see jobs.h).  Runs on the
 * socket loop's thread (submit, cancel), on the workers, and on the
 * program's forking thread (park, resume); never touches Python itself.
 */
#include "config.h"

#include "inject/agent/jobs.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/protocol.h"
#include "inject/agent/agent.h"

#define PARK_WAIT_MS 1000	/* for idle workers to leave before a fork */
#define GONE_WAIT_MS 1000	/* for the kernel to release a joined thread */

enum worker_state { WORKER_FREE, WORKER_LIVE, WORKER_EXITED };

struct worker {
	enum worker_state state;
	pthread_t thread;
	pid_t tid;
};

static struct {
	pthread_mutex_t lock;	/* everything below */
	pthread_cond_t work;	/* a job was queued, or the workers must park */
	pthread_cond_t left;	/* a worker exited or finished a job */
	struct agent_job *jobs;	/* queued and running, oldest first */
	struct worker workers[AGENT_MAX_WORKERS];
	unsigned nworkers;	/* live worker threads */
	unsigned nidle;		/* of them, waiting for a job */
	unsigned nqueued;	/* jobs no worker took yet */
	unsigned nrunning;	/* jobs taken and not finished */
	unsigned nleft;		/* of them, past their last use of the interpreter */
	unsigned nstmt;		/* statements queued or running */
	unsigned nstmt_running;	/* statements taken and not finished */
	uint64_t rr_last;	/* the connection served last (round-robin) */
	unsigned generation;	/* bumped in a forked child: old workers are gone */
	bool parking;
} J = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.left = PTHREAD_COND_INITIALIZER,
};

pid_t
jobs_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
jobs_join_thread(pthread_t thread, pid_t tid)
{
	struct timespec pause = { 0, 100 * 1000 };
	uint64_t deadline;

	pthread_join(thread, NULL);
	if (tid <= 0)
		return;
	deadline = mono_ms() + GONE_WAIT_MS;
	while (syscall(SYS_tgkill, getpid(), tid, 0) == 0 || errno != ESRCH) {
		if (mono_ms() > deadline)
			return;
		nanosleep(&pause, NULL);
	}
}

/* ---- the job list ------------------------------------------------------------ */

static void
job_free(struct agent_job *job)
{
	free(job->cmd);
	json_decref(job->args);
	free(job);
}

/* Unlink a job from the list; the lock is held. */
static void
job_unlink(struct agent_job *job)
{
	struct agent_job **pp;

	for (pp = &J.jobs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == job) {
			*pp = job->next;
			return;
		}
	}
}


void
agent_job_mark_running(struct agent_job *job, unsigned long ident)
{
	pthread_mutex_lock(&J.lock);
	job->running = true;
	job->ident = ident;
	pthread_mutex_unlock(&J.lock);
}

void
agent_job_left_python(struct agent_job *job)
{
	pthread_mutex_lock(&J.lock);
	if (!job->left_python) {
		job->left_python = true;
		J.nleft++;
	}
	pthread_mutex_unlock(&J.lock);
}

void
agent_job_mark_done(struct agent_job *job)
{
	pthread_mutex_lock(&J.lock);
	job->running = false;
	job->done = true;
	/*
	 * The statement is over before its end is sent: a client that got the
	 * end and asks again at once must not be told every worker is busy.
	 */
	if (job->stmt) {
		job->stmt = false;
		J.nstmt--;
		J.nstmt_running--;
	}
	pthread_mutex_unlock(&J.lock);
}

bool
agent_job_is_cancelled(struct agent_job *job)
{
	bool c;

	pthread_mutex_lock(&J.lock);
	c = job->cancelled;
	pthread_mutex_unlock(&J.lock);
	return c;
}

bool
agent_job_running_ident(uint64_t conn, uint64_t id, unsigned long *ident)
{
	struct agent_job *j;
	bool found = false;

	pthread_mutex_lock(&J.lock);
	for (j = J.jobs; j != NULL; j = j->next) {
		if (j->conn == conn && j->id == id && j->running && !j->done) {
			*ident = j->ident;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&J.lock);
	return found;
}

json_t *
jobs_running_ids(uint64_t conn)
{
	json_t *ids = json_array();
	struct agent_job *j;

	pthread_mutex_lock(&J.lock);
	for (j = J.jobs; j != NULL; j = j->next)
		if (j->conn == conn && j->running && !j->done)
			json_array_append_new(ids, json_integer((json_int_t)j->id));
	pthread_mutex_unlock(&J.lock);
	return ids;
}

/*
 * The next job for a worker: the oldest queued one of the connection that
 * follows, in serial order, the one served last (wrapping around).
 */
static struct agent_job *
pick(void)
{
	struct agent_job *j, *next = NULL, *first = NULL;

	for (j = J.jobs; j != NULL; j = j->next) {
		if (j->taken)
			continue;
		if (first == NULL || j->conn < first->conn)
			first = j;
		if (j->conn > J.rr_last && (next == NULL || j->conn < next->conn))
			next = j;
	}
	return next != NULL ? next : first;
}

static void
take(struct agent_job *job)
{
	job->taken = true;
	J.nqueued--;
	J.nrunning++;
	if (job->stmt)
		J.nstmt_running++;
	J.rr_last = job->conn;
}

static void
finish(struct agent_job *job)
{
	job_unlink(job);
	J.nrunning--;
	if (job->left_python)
		J.nleft--;
	if (job->stmt) {
		J.nstmt--;
		J.nstmt_running--;
	}
}

static const char *
busy_text(char *buf, size_t len)
{
	snprintf(buf, len, "all %d agent workers are busy with statements that have not "
	    "returned (execute, console, watch); cancel one or try again later", AGENT_MAX_WORKERS);
	return buf;
}

/*
 * Every worker now runs a statement: what still waits would wait for one
 * of them to return, maybe forever.  Unlink the waiting requests (not the
 * internal jobs, which clean up later); the lock is held.
 */
static struct agent_job *
unlink_stuck(void)
{
	struct agent_job *j, *next, *stuck = NULL;

	if (J.nstmt_running < AGENT_MAX_WORKERS)
		return NULL;
	for (j = J.jobs; j != NULL; j = next) {
		next = j->next;
		if (j->taken || j->id == 0)
			continue;
		job_unlink(j);
		J.nqueued--;
		j->next = stuck;
		stuck = j;
	}
	return stuck;
}

/* End (and free) a list of unlinked jobs with an error. */
static void
end_all(struct agent_job *list, const char *kind, const char *text, bool send)
{
	struct agent_job *j, *next;

	for (j = list; j != NULL; j = next) {
		next = j->next;
		if (send)
			agent_send(j->conn, proto_new_end_error(j->id, kind, text));
		job_free(j);
	}
}

/* ---- workers ----------------------------------------------------------------- */

static void
run(struct agent_job *job)
{
	if (job->id != 0)
		agent_py_run(job);
	else if (strcmp(job->cmd, "__drop") == 0)
		agent_py_drop_conn(job->conn);
	else if (strcmp(job->cmd, "__hooks") == 0)
		agent_py_install_fork_hooks();
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct agent_job *job, *stuck;
	unsigned generation;
	char text[200];

	pthread_setname_np(pthread_self(), "fp-agent-work");
	pthread_mutex_lock(&J.lock);
	w->tid = jobs_gettid();
	generation = J.generation;
	while (!J.parking) {
		if ((job = pick()) == NULL) {
			J.nidle++;
			pthread_cond_wait(&J.work, &J.lock);
			J.nidle--;
			continue;
		}
		take(job);
		stuck = unlink_stuck();
		pthread_mutex_unlock(&J.lock);
		end_all(stuck, "busy", busy_text(text, sizeof text), true);
		run(job);
		pthread_mutex_lock(&J.lock);
		if (J.generation != generation) {
			/*
			 * The request's code forked and this is the child, where
			 * no other thread of ours exists: leave, and with this
			 * last thread the child ends as the request's code did.
			 */
			pthread_mutex_unlock(&J.lock);
			job_free(job);
			return NULL;
		}
		finish(job);
		pthread_cond_broadcast(&J.left);
		pthread_mutex_unlock(&J.lock);
		job_free(job);
		pthread_mutex_lock(&J.lock);
	}
	w->state = WORKER_EXITED;
	J.nworkers--;
	pthread_cond_broadcast(&J.left);
	pthread_mutex_unlock(&J.lock);
	return NULL;
}

/*
 * Start a worker; the lock is held.  Every signal is blocked in it: it may
 * be started from the program's own thread (after a fork), whose signals
 * must keep going to the program's threads.
 */
static void
spawn_worker(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	struct worker *w = NULL;
	size_t i;

	for (i = 0; i < AGENT_MAX_WORKERS && w == NULL; i++) {
		if (J.workers[i].state == WORKER_EXITED) {
			/* Left after a park, while it finished its request. */
			pthread_join(J.workers[i].thread, NULL);
			J.workers[i].state = WORKER_FREE;
		}
		if (J.workers[i].state == WORKER_FREE)
			w = &J.workers[i];
	}
	if (w == NULL)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	/* Python code may recurse deeply: give workers a main-thread-sized stack. */
	pthread_attr_setstacksize(&attr, (size_t)8 << 20);
	w->tid = 0;
	if (pthread_create(&w->thread, &attr, worker_main, w) == 0) {
		w->state = WORKER_LIVE;
		J.nworkers++;
	}
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Start workers for what waits; the lock is held. */
static void
spawn_needed(void)
{
	while (!J.parking && J.nqueued > J.nidle && J.nworkers < AGENT_MAX_WORKERS) {
		unsigned before = J.nworkers;

		spawn_worker();
		if (J.nworkers == before)
			break;	/* out of threads: the ones there will do */
	}
}

/* ---- submit and cancel ---------------------------------------------------------- */

/* Why a new request of conn cannot wait for a worker, or NULL; the lock is held. */
static const char *
refusal(uint64_t conn, char *text, size_t len)
{
	struct agent_job *j;
	unsigned mine = 0;

	/*
	 * Every worker is, or is about to be, taken by a statement: a request
	 * would wait for code that may never return.
	 */
	if (J.nstmt >= AGENT_MAX_WORKERS)
		return busy_text(text, len);
	for (j = J.jobs; j != NULL; j = j->next)
		if (j->conn == conn && !j->taken)
			mine++;
	if (mine >= JOBS_MAX_QUEUED_PER_CONN) {
		snprintf(text, len, "%d requests of this client already wait for an agent worker; "
		    "wait for their answers", JOBS_MAX_QUEUED_PER_CONN);
		return text;
	}
	if (J.nqueued >= JOBS_MAX_QUEUED) {
		snprintf(text, len, "%d requests already wait for the agent's %d workers; "
		    "try again later", JOBS_MAX_QUEUED, AGENT_MAX_WORKERS);
		return text;
	}
	return NULL;
}

void
jobs_submit(uint64_t conn, uint64_t id, const char *cmd, json_t *args)
{
	const struct agent_command *entry = agent_command_find(cmd);
	struct agent_job *job, **pp;
	bool stmt = id != 0 && entry != NULL && entry->statement;
	const char *why;
	char text[200];

	/* Not worth a worker and the GIL: the answer is known now. */
	if (id != 0 && entry == NULL) {
		/* Quoted whole or not at all: a cut could split a UTF-8 character. */
		if (strlen(cmd) <= 80)
			snprintf(text, sizeof text, "this agent has no command '%s'", cmd);
		else
			snprintf(text, sizeof text, "this agent has no command of that name");
		agent_send(conn, proto_new_end_error(id, "usage", text));
		return;
	}
	pthread_mutex_lock(&J.lock);
	if (id != 0) {
		for (job = J.jobs; job != NULL; job = job->next) {
			if (job->conn == conn && job->id == id) {
				pthread_mutex_unlock(&J.lock);
				agent_send(conn, proto_new_end_error(id, "usage",
				    "a request with this id is already running"));
				return;
			}
		}
		if ((why = refusal(conn, text, sizeof text)) != NULL) {
			pthread_mutex_unlock(&J.lock);
			agent_send(conn, proto_new_end_error(id, "busy", why));
			return;
		}
	}
	job = calloc(1, sizeof *job);
	if (job == NULL || (job->cmd = strdup(cmd)) == NULL) {
		free(job);
		pthread_mutex_unlock(&J.lock);
		if (id != 0)
			agent_send(conn, proto_new_end_error(id, "internal", "out of memory"));
		return;
	}
	job->conn = conn;
	job->id = id;
	job->stmt = stmt;
	job->args = args ? json_incref(args) : json_object();
	for (pp = &J.jobs; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = job;
	J.nqueued++;
	if (stmt)
		J.nstmt++;
	spawn_needed();
	pthread_cond_signal(&J.work);
	pthread_mutex_unlock(&J.lock);
}

struct interrupt {
	uint64_t conn, id;
};

static void *
interrupt_main(void *arg)
{
	struct interrupt *in = arg;

	pthread_setname_np(pthread_self(), "fp-agent-intr");
	agent_py_interrupt(in->conn, in->id);
	free(in);
	return NULL;
}

/* Ask the interpreter to interrupt a running job, from a thread of its own. */
static void
spawn_interrupt(uint64_t conn, uint64_t id)
{
	struct interrupt *in = malloc(sizeof *in);
	pthread_attr_t attr;
	pthread_t t;

	if (in == NULL)
		return;
	in->conn = conn;
	in->id = id;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, interrupt_main, in) != 0)
		free(in);
	pthread_attr_destroy(&attr);
}

void
jobs_cancel(uint64_t conn, uint64_t id)
{
	struct agent_job *j, *next, *dropped = NULL;
	uint64_t torun[AGENT_MAX_WORKERS];
	size_t nrun = 0, i;

	pthread_mutex_lock(&J.lock);
	for (j = J.jobs; j != NULL; j = next) {
		next = j->next;
		if (j->conn != conn || j->id == 0 || (id != 0 && j->id != id))
			continue;
		if (!j->taken) {
			job_unlink(j);
			J.nqueued--;
			if (j->stmt)
				J.nstmt--;
			j->next = dropped;
			dropped = j;
		} else if (!j->done) {
			j->cancelled = true;
			if (nrun < sizeof torun / sizeof torun[0])
				torun[nrun++] = j->id;
		}
	}
	pthread_mutex_unlock(&J.lock);
	end_all(dropped, "cancelled", "cancelled before it started", id != 0);
	for (i = 0; i < nrun; i++)
		spawn_interrupt(conn, torun[i]);
}

/* ---- around the program's fork() ---------------------------------------------- */

void
jobs_park(void)
{
	struct worker gone[AGENT_MAX_WORKERS];
	uint64_t deadline = mono_ms() + PARK_WAIT_MS;
	struct timespec until;
	size_t i, n = 0;

	pthread_mutex_lock(&J.lock);
	J.parking = true;
	pthread_cond_broadcast(&J.work);
	/*
	 * Wait for every worker that is not inside a request to leave, and
	 * for those whose request is over but for its end (they need no
	 * GIL to finish: the forking thread holds it).
	 */
	while (J.nworkers > J.nrunning - J.nleft && mono_ms() < deadline) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 10 * 1000 * 1000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&J.left, &J.lock, &until);
	}
	for (i = 0; i < AGENT_MAX_WORKERS; i++) {
		if (J.workers[i].state == WORKER_EXITED) {
			gone[n++] = J.workers[i];
			J.workers[i].state = WORKER_FREE;
		}
	}
	pthread_mutex_unlock(&J.lock);
	for (i = 0; i < n; i++)
		jobs_join_thread(gone[i].thread, gone[i].tid);
}

void
jobs_resume(void)
{
	pthread_mutex_lock(&J.lock);
	J.parking = false;
	spawn_needed();
	pthread_mutex_unlock(&J.lock);
}

void
jobs_forget(void)
{
	struct agent_job *j, *next;

	/*
	 * Taken jobs belong to workers that do not exist here, or to the one
	 * thread that forked from a request's code, which frees its own.
	 */
	for (j = J.jobs; j != NULL; j = next) {
		next = j->next;
		if (!j->taken)
			job_free(j);
	}
	J.jobs = NULL;
	memset(J.workers, 0, sizeof J.workers);
	J.nworkers = J.nidle = J.nqueued = J.nrunning = J.nleft = J.nstmt = J.nstmt_running = 0;
	J.parking = false;
	J.generation++;
	pthread_mutex_init(&J.lock, NULL);
	pthread_cond_init(&J.work, NULL);
	pthread_cond_init(&J.left, NULL);
}
