/*
 * server — the agent's bootstrap and its socket loop.  Nothing in this file
 * touches Python: the loop runs without the GIL, so it answers the
 * handshake, pings and cancels even while every worker is stuck in user
 * code or waiting for a GIL held by a C extension.
 */
#include "config.h"

#include "inject/agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/protocol.h"

#define MAX_CONNS 32
#define HANDSHAKE_MS 5000
#define MAX_WBUF ((size_t)64 << 20)
#define READY_WAIT_MS 30000

struct conn {
	uint64_t serial;
	int fd;
	struct proto_decoder dec;
	bool hello;		/* handshake done */
	bool closing;		/* flush what is queued, then close */
	uint64_t deadline_ms;	/* handshake, or the end of a closing flush */
	unsigned char *wbuf;
	size_t wlen, woff, walloc;
};

struct outmsg {
	struct outmsg *next;
	uint64_t conn;
	unsigned char *frame;
	size_t len;
};

static struct {
	char dir[PATH_MAX];
	char sock[sizeof ((struct sockaddr_un *)0)->sun_path];
	pid_t host_pid;
	int lfd, efd;
	struct conn conns[MAX_CONNS];
	size_t nconns;
	uint64_t next_serial;

	pthread_mutex_t lock;	/* jobs and workers */
	pthread_cond_t work;
	struct agent_job *jobs;	/* queued and running, oldest first */
	unsigned nworkers, nidle, nqueued;

	pthread_mutex_t out_lock;	/* outbox */
	struct outmsg *out_head, *out_tail;
} A = {
	.lfd = -1, .efd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
	.out_lock = PTHREAD_MUTEX_INITIALIZER,
};

static atomic_int started;

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Why the agent could not serve, for the client to show: written to
 * agent.err in the socket directory, never to the target's stderr.
 */
static void
report(const char *fmt, ...)
{
	char path[PATH_MAX + 16], text[512];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof text - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof text - 2)
		n = sizeof text - 2;
	text[n++] = '\n';
	snprintf(path, sizeof path, "%s/agent.err", A.dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	(void)!write(fd, text, (size_t)n);
	close(fd);
}

pid_t
agent_host_pid(void)
{
	return A.host_pid;
}

/* ---- the outbox: workers queue frames, the loop writes them ------------- */

void
agent_send(uint64_t conn, json_t *msg)
{
	struct outmsg *m;
	uint64_t one = 1;
	char err[160];

	if (msg == NULL)
		return;
	m = calloc(1, sizeof *m);
	if (m == NULL) {
		json_decref(msg);
		return;
	}
	if (proto_encode(msg, PROTO_MAX_TO_CLIENT, &m->frame, &m->len, err, sizeof err) != 0) {
		/* Too big or not encodable: tell the client instead. */
		json_t *id = json_object_get(msg, "id");
		json_t *e = proto_new_end_error(json_is_integer(id) ? (uint64_t)json_integer_value(id) : 0,
		    "internal", err);

		if (e == NULL || proto_encode(e, PROTO_MAX_TO_CLIENT, &m->frame, &m->len, err,
		    sizeof err) != 0) {
			json_decref(e);
			json_decref(msg);
			free(m);
			return;
		}
		json_decref(e);
	}
	json_decref(msg);
	m->conn = conn;
	pthread_mutex_lock(&A.out_lock);
	if (A.out_tail != NULL)
		A.out_tail->next = m;
	else
		A.out_head = m;
	A.out_tail = m;
	pthread_mutex_unlock(&A.out_lock);
	(void)!write(A.efd, &one, sizeof one);
}

/* ---- jobs and workers ------------------------------------------------------ */

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

	for (pp = &A.jobs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == job) {
			*pp = job->next;
			return;
		}
	}
}

void
agent_job_mark_running(struct agent_job *job, unsigned long ident)
{
	pthread_mutex_lock(&A.lock);
	job->running = true;
	job->ident = ident;
	pthread_mutex_unlock(&A.lock);
}

void
agent_job_mark_done(struct agent_job *job)
{
	pthread_mutex_lock(&A.lock);
	job->running = false;
	job->done = true;
	pthread_mutex_unlock(&A.lock);
}

bool
agent_job_is_cancelled(struct agent_job *job)
{
	bool c;

	pthread_mutex_lock(&A.lock);
	c = job->cancelled;
	pthread_mutex_unlock(&A.lock);
	return c;
}

bool
agent_job_running_ident(uint64_t conn, uint64_t id, unsigned long *ident)
{
	struct agent_job *j;
	bool found = false;

	pthread_mutex_lock(&A.lock);
	for (j = A.jobs; j != NULL; j = j->next) {
		if (j->conn == conn && j->id == id && j->running && !j->done) {
			*ident = j->ident;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&A.lock);
	return found;
}

/* A job is "taken" once a worker picked it: it is no longer queued. */
#define JOB_TAKEN(j) ((j)->running || (j)->done || (j)->ident == (unsigned long)-1)

/*
 * Our threads carry their own OS names: otherwise they inherit the name of
 * the thread that started them and pass for the application's own threads
 * in `stack`, the TUI and top(1).
 */
static void
name_thread(const char *name)
{
	pthread_setname_np(pthread_self(), name);
}

static void *
worker_main(void *unused)
{
	struct agent_job *job;

	name_thread("fp-agent-work");
	pthread_mutex_lock(&A.lock);
	for (;;) {
		for (job = A.jobs; job != NULL && JOB_TAKEN(job); job = job->next)
			;
		if (job == NULL) {
			A.nidle++;
			pthread_cond_wait(&A.work, &A.lock);
			A.nidle--;
			continue;
		}
		job->ident = (unsigned long)-1;	/* taken */
		A.nqueued--;
		pthread_mutex_unlock(&A.lock);

		if (job->id == 0) {
			agent_py_drop_conn(job->conn);
		} else {
			agent_py_run(job);
		}

		pthread_mutex_lock(&A.lock);
		job_unlink(job);
		pthread_mutex_unlock(&A.lock);
		job_free(job);
		pthread_mutex_lock(&A.lock);
	}
	return NULL;
}

/* Start a worker; the lock is held. */
static bool
spawn_worker(void)
{
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* Python code may recurse deeply: give workers a main-thread-sized stack. */
	pthread_attr_setstacksize(&attr, (size_t)8 << 20);
	rc = pthread_create(&t, &attr, worker_main, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return false;
	A.nworkers++;
	return true;
}

static void
submit(uint64_t conn, uint64_t id, const char *cmd, json_t *args)
{
	struct agent_job *job, **pp;
	char text[200];

	pthread_mutex_lock(&A.lock);
	if (id != 0) {
		for (job = A.jobs; job != NULL; job = job->next) {
			if (job->conn == conn && job->id == id) {
				pthread_mutex_unlock(&A.lock);
				agent_send(conn, proto_new_end_error(id, "usage",
				    "a request with this id is already running"));
				return;
			}
		}
	}
	if (A.nqueued + 1 > A.nidle && A.nworkers < AGENT_MAX_WORKERS)
		spawn_worker();
	if (id != 0 && A.nqueued + 1 > A.nidle && A.nworkers >= AGENT_MAX_WORKERS) {
		pthread_mutex_unlock(&A.lock);
		snprintf(text, sizeof text, "all %d agent workers are busy (statements that have "
		    "not returned, or a GIL held by a C call); cancel one or try again later",
		    AGENT_MAX_WORKERS);
		agent_send(conn, proto_new_end_error(id, "busy", text));
		return;
	}
	job = calloc(1, sizeof *job);
	if (job == NULL || (job->cmd = strdup(cmd)) == NULL) {
		free(job);
		pthread_mutex_unlock(&A.lock);
		if (id != 0)
			agent_send(conn, proto_new_end_error(id, "internal", "out of memory"));
		return;
	}
	job->conn = conn;
	job->id = id;
	job->args = args ? json_incref(args) : json_object();
	for (pp = &A.jobs; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = job;
	A.nqueued++;
	pthread_cond_signal(&A.work);
	pthread_mutex_unlock(&A.lock);
}

struct interrupt {
	uint64_t conn, id;
};

static void *
interrupt_main(void *arg)
{
	struct interrupt *in = arg;

	name_thread("fp-agent-intr");
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

/*
 * Cancel one request (id != 0) or every request of a connection (id == 0,
 * when it closed).  Queued jobs are dropped; running ones are marked and
 * interrupted; their worker sends the "cancelled" end.
 */
static void
cancel(uint64_t conn, uint64_t id)
{
	struct agent_job *j, *next, *dropped = NULL;
	uint64_t torun[AGENT_MAX_WORKERS];
	size_t nrun = 0, i;

	pthread_mutex_lock(&A.lock);
	for (j = A.jobs; j != NULL; j = next) {
		next = j->next;
		if (j->conn != conn || j->id == 0 || (id != 0 && j->id != id))
			continue;
		if (!JOB_TAKEN(j)) {
			job_unlink(j);
			A.nqueued--;
			j->next = dropped;
			dropped = j;
		} else if (!j->done) {
			j->cancelled = true;
			if (nrun < sizeof torun / sizeof torun[0])
				torun[nrun++] = j->id;
		}
	}
	pthread_mutex_unlock(&A.lock);
	for (j = dropped; j != NULL; j = next) {
		next = j->next;
		if (id != 0)
			agent_send(conn, proto_new_end_error(j->id, "cancelled", "cancelled before it started"));
		job_free(j);
	}
	for (i = 0; i < nrun; i++)
		spawn_interrupt(conn, torun[i]);
}

/* ---- connections ------------------------------------------------------------ */

static struct conn *
conn_find(uint64_t serial)
{
	size_t i;

	for (i = 0; i < A.nconns; i++)
		if (A.conns[i].serial == serial)
			return &A.conns[i];
	return NULL;
}

static void
conn_queue(struct conn *c, const unsigned char *data, size_t len)
{
	size_t need, alloc;
	unsigned char *p;

	if (c->fd < 0)
		return;
	if (c->woff > 0 && c->woff == c->wlen)
		c->woff = c->wlen = 0;
	need = c->wlen + len;
	if (need - c->woff > MAX_WBUF) {
		/* The client does not read: drop it rather than grow without bound. */
		c->closing = true;
		c->wlen = c->woff = 0;
		c->deadline_ms = 0;
		return;
	}
	if (need > c->walloc) {
		if (c->woff > 0) {
			memmove(c->wbuf, c->wbuf + c->woff, c->wlen - c->woff);
			c->wlen -= c->woff;
			c->woff = 0;
			need = c->wlen + len;
		}
		alloc = c->walloc ? c->walloc : 4096;
		while (alloc < need)
			alloc *= 2;
		if (alloc > c->walloc) {
			p = realloc(c->wbuf, alloc);
			if (p == NULL) {
				c->closing = true;
				c->deadline_ms = 0;
				return;
			}
			c->wbuf = p;
			c->walloc = alloc;
		}
	}
	memcpy(c->wbuf + c->wlen, data, len);
	c->wlen += len;
}

static void
conn_send(struct conn *c, json_t *msg)
{
	unsigned char *frame;
	size_t len;
	char err[160];

	if (msg == NULL)
		return;
	if (proto_encode(msg, PROTO_MAX_TO_CLIENT, &frame, &len, err, sizeof err) == 0) {
		conn_queue(c, frame, len);
		free(frame);
	}
	json_decref(msg);
}

/* Say why (best effort), then close after the flush. */
static void
conn_refuse(struct conn *c, const char *why)
{
	json_t *m = proto_new_simple(PROTO_ERROR, 0);

	if (m != NULL)
		json_object_set_new(m, "error", json_string(why));
	conn_send(c, m);
	c->closing = true;
	c->deadline_ms = mono_ms() + 1000;
}

static void
conn_close(size_t i)
{
	struct conn *c = &A.conns[i];
	uint64_t serial = c->serial;
	bool had_hello = c->hello;

	if (c->fd >= 0)
		close(c->fd);
	proto_decoder_free(&c->dec);
	free(c->wbuf);
	A.conns[i] = A.conns[--A.nconns];
	if (had_hello) {
		cancel(serial, 0);
		submit(serial, 0, "__drop", NULL);
	}
}

static json_t *
hello_reply(void)
{
	json_t *m = proto_new_simple(PROTO_HELLO, 0);

	if (m == NULL)
		return NULL;
	json_object_set_new(m, "proto", json_integer(PROTO_VERSION));
	json_object_set_new(m, "agent", json_string(PACKAGE_VERSION));
	json_object_set_new(m, "build", json_string(FP_AGENT_BUILD));
	json_object_set_new(m, "python", json_string(agent_py_version()));
	json_object_set_new(m, "pid", json_integer(getpid()));
	json_object_set_new(m, "host_pid", json_integer(A.host_pid));
	json_object_set_new(m, "workers", json_integer(AGENT_MAX_WORKERS));
	json_object_set_new(m, "caps", agent_py_capabilities());
	return m;
}

static void
handle(struct conn *c, struct proto_msg *msg)
{
	json_t *v;
	char text[160];

	if (!c->hello) {
		if (msg->type != PROTO_HELLO) {
			conn_refuse(c, "the first message must be hello");
			return;
		}
		v = json_object_get(msg->root, "proto");
		if (json_integer_value(v) != PROTO_VERSION) {
			snprintf(text, sizeof text, "protocol version mismatch: this agent speaks %d, "
			    "the client %lld; use a flight_profiler of the same version",
			    PROTO_VERSION, (long long)json_integer_value(v));
			conn_refuse(c, text);
			return;
		}
		c->hello = true;
		c->deadline_ms = 0;
		conn_send(c, hello_reply());
		return;
	}
	switch (msg->type) {
	case PROTO_PING:
		conn_send(c, proto_new_simple(PROTO_PONG, msg->id));
		break;
	case PROTO_REQUEST:
		submit(c->serial, msg->id, msg->cmd, msg->args);
		break;
	case PROTO_CANCEL:
		cancel(c->serial, msg->id);
		break;
	default:
		snprintf(text, sizeof text, "unexpected %s message from a client", proto_type_name(msg->type));
		conn_refuse(c, text);
		break;
	}
}

static bool
peer_allowed(int fd, char *why, size_t whylen)
{
	struct ucred cred;
	socklen_t len = sizeof cred;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
		snprintf(why, whylen, "cannot check the client's credentials");
		return false;
	}
	if (cred.uid == 0 || cred.uid == getuid() || cred.uid == geteuid())
		return true;
	snprintf(why, whylen, "permission denied: uid %u may not use this agent "
	    "(only uid %u, the target's owner, and root may)", (unsigned)cred.uid, (unsigned)geteuid());
	return false;
}

static void
accept_all(void)
{
	char why[200];
	struct conn *c;
	int fd;

	for (;;) {
		fd = accept4(A.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (A.nconns >= MAX_CONNS) {
			static const char busy[] = "too many flight_profiler clients on this agent";
			json_t *m = proto_new_simple(PROTO_ERROR, 0);
			unsigned char *frame;
			size_t len;

			json_object_set_new(m, "error", json_string(busy));
			if (proto_encode(m, PROTO_MAX_TO_CLIENT, &frame, &len, why, sizeof why) == 0) {
				(void)!send(fd, frame, len, MSG_NOSIGNAL | MSG_DONTWAIT);
				free(frame);
			}
			json_decref(m);
			close(fd);
			continue;
		}
		c = &A.conns[A.nconns++];
		memset(c, 0, sizeof *c);
		c->fd = fd;
		c->serial = ++A.next_serial;
		proto_decoder_init(&c->dec, PROTO_MAX_TO_AGENT);
		c->deadline_ms = mono_ms() + HANDSHAKE_MS;
		if (!peer_allowed(fd, why, sizeof why))
			conn_refuse(c, why);
	}
}

/* Read what there is; false when the connection must close now. */
static bool conn_write(struct conn *c);

static bool
conn_read(struct conn *c)
{
	unsigned char buf[65536];
	struct proto_msg msg;
	char err[200];
	ssize_t n;
	int rc;

	for (;;) {
		n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n == 0) {
			/*
			 * The client is done sending (it may only have half-closed):
			 * what was answered at once (hello, pong, errors) still goes
			 * out; what runs on workers is cancelled with the connection.
			 */
			conn_write(c);
			return false;
		}
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		if (c->closing)
			continue;	/* discard: we are leaving */
		if (proto_decoder_feed(&c->dec, buf, (size_t)n) != 0) {
			conn_refuse(c, "frame too large");
			continue;
		}
		while (!c->closing && (rc = proto_decoder_next(&c->dec, &msg, err, sizeof err)) != 0) {
			if (rc < 0) {
				char text[260];

				snprintf(text, sizeof text, "protocol error: %s", err);
				conn_refuse(c, text);
				break;
			}
			handle(c, &msg);
			proto_msg_clear(&msg);
		}
	}
}

/* Write what we can; false when the connection failed. */
static bool
conn_write(struct conn *c)
{
	ssize_t n;

	while (c->woff < c->wlen) {
		n = send(c->fd, c->wbuf + c->woff, c->wlen - c->woff, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		c->woff += (size_t)n;
	}
	c->woff = c->wlen = 0;
	return true;
}

static void
drain_outbox(void)
{
	struct outmsg *m, *next;
	struct conn *c;
	uint64_t count;

	(void)!read(A.efd, &count, sizeof count);
	pthread_mutex_lock(&A.out_lock);
	m = A.out_head;
	A.out_head = A.out_tail = NULL;
	pthread_mutex_unlock(&A.out_lock);
	for (; m != NULL; m = next) {
		next = m->next;
		c = conn_find(m->conn);
		if (c != NULL && !c->closing)
			conn_queue(c, m->frame, m->len);
		free(m->frame);
		free(m);
	}
}

static void
serve(void)
{
	struct pollfd pfd[MAX_CONNS + 2];
	uint64_t now;
	size_t i, n;

	for (;;) {
		pfd[0].fd = A.lfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = A.efd;
		pfd[1].events = POLLIN;
		for (i = 0; i < A.nconns; i++) {
			pfd[i + 2].fd = A.conns[i].fd;
			pfd[i + 2].events = POLLIN;
			if (A.conns[i].woff < A.conns[i].wlen)
				pfd[i + 2].events |= POLLOUT;
		}
		n = A.nconns;
		if (poll(pfd, n + 2, 500) < 0) {
			if (errno == EINTR)
				continue;
			report("poll failed: %s", strerror(errno));
			return;
		}
		if (pfd[1].revents & POLLIN)
			drain_outbox();
		/* Connections, back to front: conn_close() moves the last one into i. */
		now = mono_ms();
		for (i = n; i-- > 0;) {
			struct conn *c = &A.conns[i];
			short re = pfd[i + 2].revents;
			bool keep = true;

			if (re & (POLLIN | POLLHUP | POLLERR))
				keep = conn_read(c);
			if (keep && (c->woff < c->wlen))
				keep = conn_write(c);
			if (keep && c->closing && (c->woff >= c->wlen || now >= c->deadline_ms))
				keep = false;
			if (keep && !c->hello && !c->closing && now >= c->deadline_ms)
				keep = false;	/* no handshake in time */
			if (!keep)
				conn_close(i);
		}
		if (pfd[0].revents & POLLIN)
			accept_all();
	}
}

/* ---- setting up ------------------------------------------------------------- */

static bool
setup_socket(void)
{
	struct sockaddr_un sa;
	struct stat st;

	if (mkdir(A.dir, 0700) != 0 && errno != EEXIST) {
		report("cannot create %s: %s", A.dir, strerror(errno));
		return false;
	}
	if (lstat(A.dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		report("%s is not a directory", A.dir);
		return false;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		report("%s must be a 0700 directory owned by uid %u (it is mode %o, uid %u): "
		    "refusing to serve from it", A.dir, (unsigned)geteuid(),
		    (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
		return false;
	}
	if ((size_t)snprintf(A.sock, sizeof A.sock, "%s/agent.sock", A.dir) >= sizeof A.sock) {
		report("socket path %s/agent.sock is too long", A.dir);
		return false;
	}
	A.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	A.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (A.lfd < 0 || A.efd < 0) {
		report("cannot create a socket: %s", strerror(errno));
		return false;
	}
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, A.sock, strlen(A.sock) + 1);
	unlink(A.sock);
	if (bind(A.lfd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		report("cannot bind %s: %s", A.sock, strerror(errno));
		return false;
	}
	/* The directory is 0700 already; the socket is 0600 all the same. */
	chmod(A.sock, 0600);
	if (listen(A.lfd, 64) != 0) {
		report("cannot listen on %s: %s", A.sock, strerror(errno));
		return false;
	}
	return true;
}

static void *
server_main(void *unused)
{
	uint64_t deadline = mono_ms() + READY_WAIT_MS;
	struct timespec ten_ms = { 0, 10 * 1000 * 1000 };

	name_thread("fp-agent");
	/* Injected at a safe point, maybe before the interpreter is up. */
	while (!agent_py_ready()) {
		if (mono_ms() > deadline) {
			report("the interpreter was not initialized (or is finalizing) within %d s",
			    READY_WAIT_MS / 1000);
			atomic_store(&started, 0);
			return NULL;
		}
		nanosleep(&ten_ms, NULL);
	}
	if (!setup_socket()) {
		if (A.lfd >= 0)
			close(A.lfd);
		if (A.efd >= 0)
			close(A.efd);
		A.lfd = A.efd = -1;
		atomic_store(&started, 0);
		return NULL;
	}
	serve();
	return NULL;
}

/*
 * After fork() only the forking thread exists in the child: our threads
 * are gone, so forget them and let a later fp_agent_start() begin anew.
 */
static void
atfork_child(void)
{
	size_t i;

	if (A.lfd >= 0)
		close(A.lfd);
	if (A.efd >= 0)
		close(A.efd);
	for (i = 0; i < A.nconns; i++)
		close(A.conns[i].fd);
	A.lfd = A.efd = -1;
	A.nconns = 0;
	A.jobs = NULL;
	A.nworkers = A.nidle = A.nqueued = 0;
	A.out_head = A.out_tail = NULL;
	pthread_mutex_init(&A.lock, NULL);
	pthread_mutex_init(&A.out_lock, NULL);
	pthread_cond_init(&A.work, NULL);
	atomic_store(&started, 0);
}

static pid_t
pid_from_dir(const char *dir)
{
	const char *dash = strrchr(dir, '-');
	long v;
	char *end;

	if (dash == NULL)
		return getpid();
	v = strtol(dash + 1, &end, 10);
	if (*end != '\0' || v <= 0)
		return getpid();
	return (pid_t)v;
}

/*
 * The bootstrap: called by the injector (or a test) on an arbitrary thread
 * of the target.  Only starts the server thread, with every signal blocked
 * so that the application's signals keep going to its own threads.
 */
__attribute__((visibility("default"))) void fp_agent_start(const char *arg);

void
fp_agent_start(const char *arg)
{
	static atomic_int atfork_done;
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	size_t len;

	if (arg == NULL || (len = strlen(arg)) == 0 || len >= sizeof A.dir)
		return;
	if (atomic_exchange(&started, 1) != 0)
		return;		/* already serving: never twice */
	if (atomic_exchange(&atfork_done, 1) == 0)
		pthread_atfork(NULL, NULL, atfork_child);
	memcpy(A.dir, arg, len + 1);
	A.host_pid = pid_from_dir(A.dir);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, server_main, NULL) != 0)
		atomic_store(&started, 0);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
