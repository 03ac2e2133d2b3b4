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
#include "inject/agent/clock.h"
#include "inject/agent/jobs.h"

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
	bool keeps;		/* sent a command that may leave state behind */
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

enum agent_state {
	AGENT_OFF,		/* not serving in this process: fp_agent_start() may start it */
	AGENT_SERVING,		/* the server thread runs */
	AGENT_PARKED,		/* stopped for the program's fork(), to be resumed */
};

static struct {
	char dir[PATH_MAX];
	char sock[sizeof ((struct sockaddr_un *)0)->sun_path];
	pid_t host_pid;
	int lfd, efd;
	struct conn conns[MAX_CONNS];
	size_t nconns;
	uint64_t next_serial;	/* never reset: a forked child keeps counting */

	pthread_mutex_t out_lock;	/* outbox */
	struct outmsg *out_head, *out_tail;

	pthread_mutex_t state_lock;	/* the fields below */
	enum agent_state state;
	pid_t pid;		/* the process serving (getpid() when started) */
	bool have_server;	/* a server thread to join */
	pthread_t server;
	pid_t server_tid;	/* set by the server thread itself */
	atomic_int stop;	/* the server thread must return */
	atomic_int failed;	/* it returned: it could not set up */
} A = {
	.lfd = -1, .efd = -1,
	.out_lock = PTHREAD_MUTEX_INITIALIZER,
	.state_lock = PTHREAD_MUTEX_INITIALIZER,
};

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
	bool had_hello = c->hello, keeps = c->hello && c->keeps;

	if (c->fd >= 0)
		close(c->fd);
	proto_decoder_free(&c->dec);
	free(c->wbuf);
	A.conns[i] = A.conns[--A.nconns];
	if (had_hello)
		jobs_cancel(serial, 0);
	if (keeps)
		jobs_submit(serial, 0, "__drop", NULL);
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
	json_object_set_new(m, "caps", agent_capabilities());
	return m;
}

/*
 * A pong lists the connection's requests that a worker runs now, holding
 * the GIL: a client whose request takes long can then tell slow Python code
 * (a slow __repr__) from a worker still waiting for the GIL.
 */
static json_t *
pong_reply(uint64_t conn, uint64_t id)
{
	json_t *m = proto_new_simple(PROTO_PONG, id);

	json_object_set_new(m, "running", jobs_running_ids(conn));
	return m;
}

static void
handle(struct conn *c, struct proto_msg *msg)
{
	const struct agent_command *entry;
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
		conn_send(c, pong_reply(c->serial, msg->id));
		break;
	case PROTO_REQUEST:
		entry = agent_command_find(msg->cmd);
		c->keeps |= entry != NULL && entry->keeps;
		jobs_submit(c->serial, msg->id, msg->cmd, msg->args);
		break;
	case PROTO_CANCEL:
		jobs_cancel(c->serial, msg->id);
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

	while (!atomic_load(&A.stop)) {
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
		agent_clock_tune();
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

/*
 * The server failed to start: a later fp_agent_start() may try again.
 * Not under state_lock: agent_park() holds it while it joins this thread.
 */
static void
server_failed(void)
{
	if (A.lfd >= 0)
		close(A.lfd);
	if (A.efd >= 0)
		close(A.efd);
	A.lfd = A.efd = -1;
	atomic_store(&A.failed, 1);
}

static void *
server_main(void *unused)
{
	uint64_t deadline = mono_ms() + READY_WAIT_MS;
	struct timespec ten_ms = { 0, 10 * 1000 * 1000 };

	name_thread("fp-agent");
	A.server_tid = jobs_gettid();
	/* Set up once; a resumed server finds its socket and connections. */
	if (A.lfd < 0) {
		/* Injected at a safe point, maybe before the interpreter is up. */
		while (!agent_py_ready()) {
			if (atomic_load(&A.stop))
				return NULL;
			if (mono_ms() > deadline) {
				report("the interpreter was not initialized (or is finalizing) within %d s",
				    READY_WAIT_MS / 1000);
				server_failed();
				return NULL;
			}
			nanosleep(&ten_ms, NULL);
		}
		if (!setup_socket()) {
			server_failed();
			return NULL;
		}
		agent_clock_start();
		/* Keep our threads out of the program's fork() (forkhooks.c). */
		jobs_submit(0, 0, "__hooks", NULL);
	}
	serve();
	return NULL;
}

/*
 * Start the server thread, with every signal blocked so that the
 * application's signals keep going to its own threads; state_lock is held.
 */
static bool
start_server(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	bool ok;

	if (A.have_server) {
		/* One that failed and returned: reap it. */
		pthread_join(A.server, NULL);
		A.have_server = false;
	}
	atomic_store(&A.stop, 0);
	atomic_store(&A.failed, 0);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	ok = pthread_create(&A.server, &attr, server_main, NULL) == 0;
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	A.have_server = ok;
	return ok;
}

/* Make the server thread return and join it; state_lock is held. */
static void
stop_server(void)
{
	uint64_t one = 1;

	if (!A.have_server)
		return;
	atomic_store(&A.stop, 1);
	if (A.efd >= 0)
		(void)!write(A.efd, &one, sizeof one);
	jobs_join_thread(A.server, A.server_tid);
	A.have_server = false;
}

void
agent_park(void)
{
	pthread_mutex_lock(&A.state_lock);
	if (A.state == AGENT_SERVING && A.pid == getpid() && !atomic_load(&A.failed)) {
		stop_server();
		jobs_park();
		A.state = AGENT_PARKED;
	}
	pthread_mutex_unlock(&A.state_lock);
}

void
agent_resume(void)
{
	pthread_mutex_lock(&A.state_lock);
	if (A.state == AGENT_PARKED && A.pid == getpid()) {
		jobs_resume();
		A.state = start_server() ? AGENT_SERVING : AGENT_OFF;
	}
	pthread_mutex_unlock(&A.state_lock);
}

/*
 * After fork() only the forking thread exists in the child: our threads
 * are gone, and the socket, the eventfd and the connections are the
 * parent's.  Close our copies and stay dormant: a flight_profiler that
 * attaches to the child calls fp_agent_start() again with the child's
 * own directory.
 */
static void
atfork_child(void)
{
	struct outmsg *m, *next;
	size_t i;

	if (A.lfd >= 0)
		close(A.lfd);
	if (A.efd >= 0)
		close(A.efd);
	for (i = 0; i < A.nconns; i++) {
		close(A.conns[i].fd);
		proto_decoder_free(&A.conns[i].dec);
		free(A.conns[i].wbuf);
	}
	A.lfd = A.efd = -1;
	A.nconns = 0;
	for (m = A.out_head; m != NULL; m = next) {
		next = m->next;
		free(m->frame);
		free(m);
	}
	A.out_head = A.out_tail = NULL;
	A.dir[0] = A.sock[0] = '\0';
	jobs_forget();
	A.state = AGENT_OFF;
	A.have_server = false;
	atomic_store(&A.failed, 0);
	pthread_mutex_init(&A.out_lock, NULL);
	pthread_mutex_init(&A.state_lock, NULL);
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
 * of the target.  Only starts the server thread and returns.  Called again
 * in a process where the agent serves, it does nothing (never twice); in a
 * forked child, where the inherited agent is dormant, it starts it anew
 * with the child's directory; a parked agent is resumed.
 */
__attribute__((visibility("default"))) void fp_agent_start(const char *arg);

void
fp_agent_start(const char *arg)
{
	static atomic_int atfork_done;
	size_t len;

	if (arg == NULL || (len = strlen(arg)) == 0 || len >= sizeof A.dir)
		return;
	if (atomic_exchange(&atfork_done, 1) == 0)
		pthread_atfork(NULL, NULL, atfork_child);
	pthread_mutex_lock(&A.state_lock);
	if (A.state == AGENT_PARKED && A.pid == getpid()) {
		pthread_mutex_unlock(&A.state_lock);
		agent_resume();
		return;
	}
	if (A.state == AGENT_SERVING && atomic_load(&A.failed))
		A.state = AGENT_OFF;	/* start_server() reaps the thread */
	if (A.state == AGENT_OFF) {
		memcpy(A.dir, arg, len + 1);
		A.host_pid = pid_from_dir(A.dir);
		A.pid = getpid();
		A.state = start_server() ? AGENT_SERVING : AGENT_OFF;
	}
	pthread_mutex_unlock(&A.state_lock);
}
