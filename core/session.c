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

struct session {
	pid_t pid;
	int fd;
	struct proto_decoder dec;
	struct proto_msg hello;
	struct session_info info;
	uint64_t next_id, next_ping;
	uint64_t last_rx_ns;	/* when anything last arrived */
	uint64_t ping_sent_ns;	/* 0: no ping outstanding */
	json_t *running;	/* the last pong's requests running in a worker */
	bool eof;
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

/*
 * Read and decode until a message that is not a pong arrives (FP_OK, *msg
 * set), the deadline passes (FP_OK, msg->root == NULL), or the connection
 * fails.  Pings the agent when it has been silent.
 */
static int
receive(struct session *s, uint64_t deadline_ns, struct proto_msg *msg, char **cause)
{
	unsigned char buf[65536];
	struct pollfd pfd;
	char err[200];
	uint64_t now;
	ssize_t n;
	int rc, wait;

	memset(msg, 0, sizeof *msg);
	for (;;) {
		rc = proto_decoder_next(&s->dec, msg, err, sizeof err);
		if (rc < 0)
			return fail(cause, FP_ERR, "the agent in process %d sent a bad message: %s",
			    (int)s->pid, err);
		if (rc == 1) {
			if (msg->type == PROTO_PONG) {
				s->ping_sent_ns = 0;
				json_decref(s->running);
				s->running = json_incref(json_object_get(msg->root, "running"));
				proto_msg_clear(msg);
				continue;
			}
			if (msg->type == PROTO_ERROR) {
				rc = fail(cause, FP_ERR, "the agent in process %d: %s", (int)s->pid, msg->error);
				proto_msg_clear(msg);
				return rc;
			}
			return FP_OK;
		}
		if (s->eof)
			return gone(s, cause);
		now = now_ns();
		if (deadline_ns != 0 && now >= deadline_ns)
			return FP_OK;
		wait = 250;
		if (deadline_ns != 0 && (deadline_ns - now) / 1000000 < (uint64_t)wait)
			wait = (int)((deadline_ns - now) / 1000000) + 1;
		pfd.fd = s->fd;
		pfd.events = POLLIN;
		rc = poll(&pfd, 1, wait);
		if (rc < 0 && errno != EINTR)
			return fail(cause, FP_ERR, "poll: %s", strerror(errno));
		if (rc > 0) {
			n = recv(s->fd, buf, sizeof buf, 0);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				s->eof = true;
				continue;	/* decode what is left first */
			}
			s->last_rx_ns = now_ns();
			if (proto_decoder_feed(&s->dec, buf, (size_t)n) != 0)
				return fail(cause, FP_ERR, "the agent in process %d sent an oversized message",
				    (int)s->pid);
			continue;
		}
		/* Silence: is the target alive, is the agent there? */
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
	}
}

int
session_open(pid_t pid, int fd, int timeout_ms, struct session **sp, char **cause)
{
	struct session *s;
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
	rc = receive(s, now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : SESSION_HANDSHAKE_MS) * 1000000,
	    &s->hello, cause);
	if (rc != FP_OK)
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
	if (s == NULL)
		return;
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

int
session_send(struct session *s, const char *cmd, json_t *args, uint64_t *id, char **cause)
{
	*id = s->next_id++;
	/* What an earlier pong said is not about this request: forget it. */
	json_decref(s->running);
	s->running = NULL;
	return send_all(s, proto_new_request(*id, cmd, args), cause);
}

int
session_next(struct session *s, uint64_t id, int timeout_ms, struct proto_msg *msg, char **cause)
{
	uint64_t deadline = timeout_ms < 0 ? 0 : now_ns() + (uint64_t)timeout_ms * 1000000;
	int rc;

	for (;;) {
		rc = receive(s, deadline, msg, cause);
		if (rc != FP_OK)
			return rc;
		if (msg->root == NULL)
			return FP_OK;	/* timed out */
		if ((msg->type == PROTO_EVENT || msg->type == PROTO_END) && msg->id == id)
			return FP_OK;
		proto_msg_clear(msg);	/* a late answer to an earlier request */
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
