#include "config.h"

#include "core/session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/procfs.h"

#define PING_AFTER_MS 2000	/* silence before we ask "are you there?" */
#define PING_TIMEOUT_MS 5000	/* no answer to that: the agent is gone */
#define PING_ID_BASE ((uint64_t)1 << 52)
#define CHECK_EVERY_MS 250	/* how often silence is looked into */
#define PUMP_BUDGET ((size_t)128 << 10)	/* bytes read by one pump: a turn of the caller's loop stays short */

/* A message waiting in a queued request. */
struct queued {
	struct queued *next;
	struct proto_msg msg;
};

struct request {
	struct request *next;
	uint64_t id;
	const struct session_handler *h;	/* NULL: queued for session_next */
	void *ctx;
	struct queued *head, *tail;
	size_t nevents;		/* events queued */
	uint64_t dropped;	/* events dropped from a full queue */
	bool forgotten;		/* drop its messages, free it at its end */
};

struct session {
	pid_t pid;
	int fd;
	struct proto_decoder dec;
	struct proto_msg hello;
	struct session_info info;
	uint64_t next_id, next_ping;
	uint64_t last_rx_ns;	/* when anything last arrived */
	uint64_t ping_sent_ns;	/* 0: no ping outstanding */
	uint64_t checked_ns;	/* when silence was last looked into */
	json_t *running;	/* the last pong's requests running in a worker */
	struct request *reqs;	/* open requests, newest first */
	size_t nreqs;
	bool eof;
	int dead;		/* FP_OK, or why the connection is over */
	char *dead_cause;
};

/* Alive and not a zombie (a zombie's agent thread is gone too). */
static bool
alive(pid_t pid)
{
	struct proc_thread_stat st;

	if (!procfs_exists(pid))
		return false;
	if (procfs_thread_stat(pid, pid, &st) && (st.state == 'Z' || st.state == 'X'))
		return false;
	return true;
}

static uint64_t
ms_since(uint64_t t_ns)
{
	return (now_ns() - t_ns) / 1000000;
}

static int
send_all(struct session *s, json_t *msg, char **cause)
{
	unsigned char *frame;
	size_t len, off = 0;
	char err[200];
	ssize_t n;

	if (msg == NULL)
		return fail(cause, FP_ERR, "out of memory");
	if (s->dead != FP_OK) {
		json_decref(msg);
		return fail(cause, s->dead, "%s", s->dead_cause);
	}
	if (proto_encode(msg, PROTO_MAX_TO_AGENT, &frame, &len, err, sizeof err) != 0) {
		json_decref(msg);
		return fail(cause, FP_EUSAGE, "cannot send the request: %s", err);
	}
	json_decref(msg);
	while (off < len) {
		n = send(s->fd, frame + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(frame);
			if (!alive(s->pid))
				return fail(cause, FP_EEXITED, "process %d exited", (int)s->pid);
			return fail(cause, FP_ERR, "the agent in process %d closed the connection (%s)",
			    (int)s->pid, strerror(errno));
		}
		off += (size_t)n;
	}
	free(frame);
	return FP_OK;
}

/* Why the connection ended, as a status and message. */
static int
gone(struct session *s, char **cause)
{
	struct timespec ten_ms = { 0, 10 * 1000 * 1000 };
	int i;

	/* A dying process closes its files before it turns into a zombie. */
	for (i = 0; i < 30; i++) {
		if (!alive(s->pid))
			return fail(cause, FP_EEXITED, "process %d exited", (int)s->pid);
		nanosleep(&ten_ms, NULL);
	}
	return fail(cause, FP_ERR, "the agent in process %d closed the connection", (int)s->pid);
}

/* ---- open requests --------------------------------------------------------------- */

static struct request *
find(const struct session *s, uint64_t id)
{
	struct request *r;

	for (r = s->reqs; r != NULL; r = r->next)
		if (r->id == id)
			return r;
	return NULL;
}

static void
unlink_request(struct session *s, struct request *r)
{
	struct request **pp;

	for (pp = &s->reqs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			s->nreqs--;
			return;
		}
	}
}

static void
free_queue(struct request *r)
{
	struct queued *q, *next;

	for (q = r->head; q != NULL; q = next) {
		next = q->next;
		proto_msg_clear(&q->msg);
		free(q);
	}
	r->head = r->tail = NULL;
	r->nevents = 0;
}

static void
free_request(struct request *r)
{
	free_queue(r);
	free(r);
}

/* Queue a message (taken) for r: a full queue loses its oldest event. */
static void
enqueue(struct request *r, struct proto_msg *msg)
{
	struct queued *q;

	if (msg->type == PROTO_EVENT && r->nevents >= SESSION_QUEUE_MAX &&
	    r->head != NULL && r->head->msg.type == PROTO_EVENT) {
		q = r->head;
		r->head = q->next;
		if (r->head == NULL)
			r->tail = NULL;
		proto_msg_clear(&q->msg);
		free(q);
		r->nevents--;
		r->dropped++;
	}
	q = xcalloc(1, sizeof *q);
	q->msg = *msg;
	memset(msg, 0, sizeof *msg);
	if (r->tail != NULL)
		r->tail->next = q;
	else
		r->head = q;
	r->tail = q;
	if (q->msg.type == PROTO_EVENT)
		r->nevents++;
}

/* Hand an event or end (taken) to its request; a message nobody waits for is dropped. */
static void
route(struct session *s, struct proto_msg *msg)
{
	struct request *r = find(s, msg->id);
	bool end = msg->type == PROTO_END;

	if (r == NULL || (r->forgotten && !end)) {
		proto_msg_clear(msg);	/* a late answer to a request given up */
		return;
	}
	if (end && (r->h != NULL || r->forgotten))
		unlink_request(s, r);
	if (r->forgotten) {
		free_request(r);
	} else if (r->h == NULL) {
		enqueue(r, msg);
	} else if (end) {
		if (r->h->end != NULL)
			r->h->end(r->ctx, r->id, msg);
		free_request(r);
	} else if (r->h->event != NULL) {
		r->h->event(r->ctx, r->id, msg->data);
	}
	proto_msg_clear(msg);
}

/*
 * The connection is over: remember why, end every handled request with
 * it; queued ones learn it from session_next.  Returns the status.
 */
static int
die(struct session *s, int status, char **cause)
{
	struct request *r, **pp;

	if (s->dead == FP_OK) {
		s->dead = status;
		s->dead_cause = xstrdup(cause != NULL && *cause != NULL ? *cause : "the connection failed");
	}
	for (pp = &s->reqs; (r = *pp) != NULL;) {
		if (r->h == NULL && !r->forgotten) {
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		s->nreqs--;
		if (r->h != NULL && !r->forgotten && r->h->error != NULL)
			r->h->error(r->ctx, r->id, s->dead, s->dead_cause);
		free_request(r);
	}
	if (cause != NULL && *cause == NULL)
		*cause = xstrdup(s->dead_cause);
	return s->dead;
}

/* ---- reading -------------------------------------------------------------------- */

/* Decode and dispatch every complete message. */
static int
dispatch(struct session *s, char **cause)
{
	struct proto_msg msg;
	char err[200];
	int rc;

	for (;;) {
		rc = proto_decoder_next(&s->dec, &msg, err, sizeof err);
		if (rc < 0)
			return fail(cause, FP_ERR, "the agent in process %d sent a bad message: %s",
			    (int)s->pid, err);
		if (rc == 0)
			return FP_OK;
		switch (msg.type) {
		case PROTO_PONG:
			s->ping_sent_ns = 0;
			json_decref(s->running);
			s->running = json_incref(json_object_get(msg.root, "running"));
			proto_msg_clear(&msg);
			break;
		case PROTO_ERROR:
			rc = fail(cause, FP_ERR, "the agent in process %d: %s", (int)s->pid, msg.error);
			proto_msg_clear(&msg);
			return rc;
		case PROTO_HELLO:
			if (s->hello.root == NULL)
				s->hello = msg;
			else
				proto_msg_clear(&msg);
			break;
		case PROTO_EVENT:
		case PROTO_END:
			route(s, &msg);
			break;
		default:
			proto_msg_clear(&msg);
			break;
		}
	}
}

/*
 * Read what is there, up to PUMP_BUDGET bytes, without blocking, and
 * dispatch each read's messages before the next read (the decoder holds
 * at most one frame and a read).
 */
static int
fill(struct session *s, char **cause)
{
	unsigned char buf[65536];
	size_t got = 0;
	ssize_t n;
	int rc;

	while (!s->eof && got < PUMP_BUDGET) {
		n = recv(s->fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			s->eof = true;	/* decode what is left first */
			break;
		}
		got += (size_t)n;
		s->last_rx_ns = now_ns();
		if (proto_decoder_feed(&s->dec, buf, (size_t)n) != 0)
			return fail(cause, FP_ERR, "the agent in process %d sent an oversized message",
			    (int)s->pid);
		if ((rc = dispatch(s, cause)) != FP_OK)
			return rc;
	}
	return dispatch(s, cause);
}

/* Silence while something is awaited: is the target alive, is the agent there? */
static int
check_silence(struct session *s, char **cause)
{
	int rc;

	if (ms_since(s->last_rx_ns) < CHECK_EVERY_MS || ms_since(s->checked_ns) < CHECK_EVERY_MS)
		return FP_OK;
	s->checked_ns = now_ns();
	if (!alive(s->pid))
		return fail(cause, FP_EEXITED, "process %d exited", (int)s->pid);
	if (s->ping_sent_ns != 0 && ms_since(s->ping_sent_ns) >= PING_TIMEOUT_MS)
		return fail(cause, FP_ERR, "the agent in process %d stopped answering "
		    "(no reply to a ping within %d s)", (int)s->pid, PING_TIMEOUT_MS / 1000);
	if (s->ping_sent_ns == 0 && ms_since(s->last_rx_ns) >= PING_AFTER_MS) {
		if ((rc = send_all(s, proto_new_simple(PROTO_PING, s->next_ping++), cause)) != FP_OK)
			return rc;
		s->ping_sent_ns = now_ns();
	}
	return FP_OK;
}

int
session_pump(struct session *s, char **cause)
{
	char *why = NULL;
	int rc;

	if (s->dead != FP_OK)
		return fail(cause, s->dead, "%s", s->dead_cause);
	rc = fill(s, &why);
	if (rc == FP_OK && s->eof)
		rc = gone(s, &why);
	if (rc == FP_OK && (s->nreqs > 0 || s->hello.root == NULL))
		rc = check_silence(s, &why);
	if (rc != FP_OK) {
		die(s, rc, &why);
		fail(cause, rc, "%s", why);
	}
	free(why);
	return rc;
}

int
session_wait(struct session *s, int timeout_ms, char **cause)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };

	if (s->dead == FP_OK && !s->eof && timeout_ms > 0 &&
	    poll(&pfd, 1, timeout_ms) < 0 && errno != EINTR)
		return fail(cause, FP_ERR, "poll: %s", strerror(errno));
	return session_pump(s, cause);
}

/* How long to wait next for a deadline (0: none) at most `cap` ms. */
static int
wait_for(uint64_t deadline_ns, int cap)
{
	uint64_t now = now_ns();

	if (deadline_ns == 0)
		return cap;
	if (now >= deadline_ns)
		return 0;
	if ((deadline_ns - now) / 1000000 < (uint64_t)cap)
		return (int)((deadline_ns - now) / 1000000) + 1;
	return cap;
}

int
session_open(pid_t pid, int fd, int timeout_ms, struct session **sp, char **cause)
{
	struct session *s;
	uint64_t deadline;
	json_t *hello;
	int rc;

	*sp = NULL;
	s = xcalloc(1, sizeof *s);
	s->pid = pid;
	s->fd = fd;
	s->next_id = 1;
	s->next_ping = PING_ID_BASE;
	s->last_rx_ns = now_ns();
	proto_decoder_init(&s->dec, PROTO_MAX_TO_CLIENT);

	hello = proto_new_simple(PROTO_HELLO, 0);
	json_object_set_new(hello, "proto", json_integer(PROTO_VERSION));
	json_object_set_new(hello, "client", json_string(PACKAGE_NAME " " PACKAGE_VERSION));
	if ((rc = send_all(s, hello, cause)) != FP_OK)
		goto bad;
	deadline = now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : SESSION_HANDSHAKE_MS) * 1000000;
	while (s->hello.root == NULL && now_ns() < deadline)
		if ((rc = session_wait(s, wait_for(deadline, CHECK_EVERY_MS), cause)) != FP_OK)
			goto bad;
	if (s->hello.root == NULL) {
		rc = fail(cause, FP_ERR, "the agent of process %d did not answer the handshake within "
		    "%.1f s", (int)pid, (timeout_ms > 0 ? timeout_ms : SESSION_HANDSHAKE_MS) / 1000.0);
		goto bad;
	}
	if (s->hello.type != PROTO_HELLO) {
		rc = fail(cause, FP_ERR, "the agent of process %d answered the handshake with a %s message",
		    (int)pid, proto_type_name(s->hello.type));
		goto bad;
	}
	s->info.proto = (int)json_integer_value(json_object_get(s->hello.root, "proto"));
	if (s->info.proto != PROTO_VERSION) {
		rc = fail(cause, FP_EVERSION, "the agent of process %d speaks protocol %d, this "
		    "flight_profiler %d: use the flight_profiler that loaded it", (int)pid,
		    s->info.proto, PROTO_VERSION);
		goto bad;
	}
#define STR(k) (json_string_value(json_object_get(s->hello.root, k)) ? \
	json_string_value(json_object_get(s->hello.root, k)) : "?")
	s->info.agent = STR("agent");
	s->info.build = STR("build");
	s->info.python = STR("python");
#undef STR
	s->info.pid = (long)json_integer_value(json_object_get(s->hello.root, "pid"));
	s->info.caps = json_object_get(s->hello.root, "caps");
	*sp = s;
	return FP_OK;
bad:
	session_close(s);
	return rc;
}

void
session_close(struct session *s)
{
	struct request *r;
	char *why;

	if (s == NULL)
		return;
	/* Handled requests hear that they are over. */
	why = xstrdup("the session with the agent was closed");
	die(s, FP_ERR, &why);
	free(why);
	while ((r = s->reqs) != NULL) {
		s->reqs = r->next;
		free_request(r);
	}
	free(s->dead_cause);
	if (s->fd >= 0)
		close(s->fd);
	proto_decoder_free(&s->dec);
	proto_msg_clear(&s->hello);
	json_decref(s->running);
	free(s);
}

const struct session_info *
session_info(const struct session *s)
{
	return &s->info;
}

pid_t
session_pid(const struct session *s)
{
	return s->pid;
}

bool
session_has_cap(const struct session *s, const char *cap)
{
	size_t i;
	json_t *v;

	json_array_foreach(s->info.caps, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), cap) == 0)
			return true;
	return false;
}

/* Send a request and open it (h NULL: queued). */
static int
open_request(struct session *s, const char *cmd, json_t *args, const struct session_handler *h,
    void *ctx, uint64_t *id, char **cause)
{
	struct request *r;
	int rc;

	*id = s->next_id++;
	/* What an earlier pong said is not about this request: forget it. */
	json_decref(s->running);
	s->running = NULL;
	if ((rc = send_all(s, proto_new_request(*id, cmd, args), cause)) != FP_OK)
		return rc;
	r = xcalloc(1, sizeof *r);
	r->id = *id;
	r->h = h;
	r->ctx = ctx;
	r->next = s->reqs;
	s->reqs = r;
	s->nreqs++;
	return FP_OK;
}

int
session_start(struct session *s, const char *cmd, json_t *args, const struct session_handler *h,
    void *ctx, uint64_t *id, char **cause)
{
	return open_request(s, cmd, args, h, ctx, id, cause);
}

int
session_send(struct session *s, const char *cmd, json_t *args, uint64_t *id, char **cause)
{
	return open_request(s, cmd, args, NULL, NULL, id, cause);
}

int
session_fd(const struct session *s)
{
	/* A closed socket stays readable: polling it would spin. */
	return s->dead != FP_OK || s->eof ? -1 : s->fd;
}

size_t
session_pending(const struct session *s)
{
	return s->nreqs;
}

uint64_t
session_dropped(const struct session *s, uint64_t id)
{
	struct request *r = find(s, id);

	return r != NULL ? r->dropped : 0;
}

void
session_forget(struct session *s, uint64_t id)
{
	struct request *r = find(s, id);

	if (r == NULL)
		return;
	/* Over already (its end queued, or the connection): nothing more comes. */
	if ((r->tail != NULL && r->tail->msg.type == PROTO_END) || s->dead != FP_OK) {
		unlink_request(s, r);
		free_request(r);
		return;
	}
	free_queue(r);
	r->forgotten = true;
	r->h = NULL;
}

/* Take the first queued message of r into *msg; after its end r is over. */
static void
dequeue(struct session *s, struct request *r, struct proto_msg *msg)
{
	struct queued *q = r->head;

	r->head = q->next;
	if (r->head == NULL)
		r->tail = NULL;
	*msg = q->msg;
	free(q);
	if (msg->type == PROTO_EVENT) {
		r->nevents--;
	} else {
		unlink_request(s, r);
		free_request(r);
	}
}

int
session_next(struct session *s, uint64_t id, int timeout_ms, struct proto_msg *msg, char **cause)
{
	uint64_t deadline = timeout_ms < 0 ? 0 : now_ns() + (uint64_t)timeout_ms * 1000000;
	struct request *r;
	int rc;

	memset(msg, 0, sizeof *msg);
	for (;;) {
		r = find(s, id);
		if (r == NULL || r->h != NULL || r->forgotten)
			return fail(cause, FP_EUSAGE, "request %llu is not waiting to be read",
			    (unsigned long long)id);
		if (r->head != NULL) {
			dequeue(s, r, msg);
			return FP_OK;
		}
		if (s->dead != FP_OK) {
			unlink_request(s, r);
			free_request(r);
			return fail(cause, s->dead, "%s", s->dead_cause);
		}
		if (deadline != 0 && now_ns() >= deadline)
			return FP_OK;	/* timed out */
		rc = session_wait(s, wait_for(deadline, CHECK_EVERY_MS), cause);
		if (rc != FP_OK && s->dead == FP_OK)
			return rc;
	}
}

int
session_cancel(struct session *s, uint64_t id, char **cause)
{
	return send_all(s, proto_new_simple(PROTO_CANCEL, id), cause);
}

int
session_running(const struct session *s, uint64_t id)
{
	size_t i;
	json_t *v;

	if (s->running == NULL)
		return -1;
	json_array_foreach(s->running, i, v)
		if ((uint64_t)json_integer_value(v) == id)
			return 1;
	return 0;
}

/* A request that timed out and was cancelled: say what the wait was for. */
static int
timed_out(struct session *s, const char *cmd, uint64_t id, uint64_t started, char **cause)
{
	double secs = (double)(now_ns() - started) / 1e9;

	switch (session_running(s, id)) {
	case 1:
		return fail(cause, FP_ERR, "%s: the request was still running in process %d "
		    "(slow Python code in the target, e.g. a slow __repr__ or property); it was "
		    "cancelled after %.1f s", cmd, (int)s->pid, secs);
	case 0:
		return fail(cause, FP_ERR, "%s: the request did not start in process %d within "
		    "%.1f s: it waits for the GIL, which a thread may hold in a long C call "
		    "(`stack` shows which); it was cancelled", cmd, (int)s->pid, secs);
	default:
		return fail(cause, FP_ERR, "%s: no answer from the agent of process %d within "
		    "%.1f s; it was cancelled", cmd, (int)s->pid, secs);
	}
}

int
session_call(struct session *s, const char *cmd, json_t *args, int timeout_ms,
    session_event_fn on_event, void *ctx, struct proto_msg *end, char **cause)
{
	struct proto_msg msg;
	uint64_t id, started = now_ns();
	int rc;

	memset(end, 0, sizeof *end);
	if ((rc = session_send(s, cmd, args, &id, cause)) != FP_OK)
		return rc;
	for (;;) {
		rc = session_next(s, id, timeout_ms, &msg, cause);
		if (rc == FP_OK && msg.root == NULL) {
			session_cancel(s, id, NULL);
			session_forget(s, id);
			return timed_out(s, cmd, id, started, cause);
		}
		if (rc != FP_OK)
			return rc;
		if (msg.type == PROTO_END) {
			*end = msg;
			return FP_OK;
		}
		if (on_event != NULL && msg.data != NULL)
			on_event(msg.data, ctx);
		proto_msg_clear(&msg);
	}
}
