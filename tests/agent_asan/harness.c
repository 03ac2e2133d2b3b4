/*
 * harness — the agent's logic under ASan/UBSan (DESIGN.md §9).
 *
 * The real agent goes into uninstrumented interpreters, where no sanitizer
 * runtime can follow it.  This program embeds one configured CPython,
 * starts a small Python workload thread, then loads a sanitizer build of
 * the agent (the same sources, fpagent-cp3X.so built with SAN_CFLAGS into
 * tests/agent_asan/) the way the injector does: dlopen(RTLD_NOW), dlsym
 * "fp_agent_start", called with a 0700 directory.  It then drives the
 * agent over its Unix socket with the real client (core/session.c) and
 * with raw frames (core/protocol.c), finalizes the interpreter with the
 * agent's threads still there, and checks that the agent still answers
 * (refusing Python work) afterwards.  Output is TAP; any ASan or UBSan
 * report aborts the process, which fails the test.
 *
 * Usage: harness.t AGENT.so   (tests/agent_asan/harness.sh passes it)
 */
#include "config.h"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "core/protocol.h"
#include "core/session.h"
#include "core/util.h"
#include "tests/unit/tap.h"

#define CALL_MS 20000

static char sock_path[sizeof ((struct sockaddr_un *)0)->sun_path];

static const char workload_py[] =
	"import threading, time\n"
	"class Widget(object):\n"
	"    __slots__ = ('n', '__hidden')\n"
	"    def __init__(self, n):\n"
	"        self.n = n\n"
	"        self.__hidden = -n\n"
	"class BadRepr(object):\n"
	"    def __repr__(self):\n"
	"        raise RuntimeError('no repr for you')\n"
	"    @property\n"
	"    def boom(self):\n"
	"        raise ValueError('property raised')\n"
	"_rec = [1, 2]\n"
	"_rec.append(_rec)\n"
	"_deep = [0]\n"
	"for _i in range(12):\n"
	"    _deep = [_deep, {'k%d' % _i: _deep}]\n"
	"G_STATE = {'ticks': 0, 'name': 'workload', 'widgets': [Widget(i) for i in range(3)]}\n"
	"G_TRICKY = {\n"
	"    'rec': _rec, 'bad': BadRepr(), 'bytes': b'\\x00\\xff' * 40, 'big': 10 ** 400,\n"
	"    'neg': -2 ** 70, 'f': float('nan'), 'inf': float('-inf'), 's': {1, 2, 3},\n"
	"    'fs': frozenset(), 'u': '\\U0001F600 \\udcff \\x00 end', 'deep': _deep,\n"
	"    'long': 'x' * 200000, 'many': list(range(5000)), 'tuple': (None, True, 1j),\n"
	"    b'k': 'bytes key', (1, 2): 'tuple key', 'type': Widget, 'mod': threading,\n"
	"    'range': range(10), 'ba': bytearray(b'abc'), 'mv': memoryview(b'xyz'),\n"
	"}\n"
	"G_RUN = True\n"
	"def _work():\n"
	"    while G_RUN:\n"
	"        G_STATE['ticks'] += 1\n"
	"        time.sleep(0.002)\n"
	"_worker = threading.Thread(target=_work, name='fp-harness-workload')\n"
	"_worker.start()\n";

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* ---- the real client ------------------------------------------------------- */

struct events {
	char out[8192];
	size_t len;
	int n;
};

static void
on_event(json_t *data, void *ctx)
{
	struct events *ev = ctx;
	const char *s = json_string_value(json_object_get(data, "out"));
	size_t n;

	ev->n++;
	if (s == NULL)
		return;
	n = strlen(s);
	if (n > sizeof ev->out - 1 - ev->len)
		n = sizeof ev->out - 1 - ev->len;
	memcpy(ev->out + ev->len, s, n);
	ev->len += n;
	ev->out[ev->len] = '\0';
}

/* One request through session_call; *end is the end message (clear it). */
static bool
call(struct session *s, const char *cmd, const char *args_json, struct proto_msg *end,
    struct events *ev)
{
	json_error_t jerr;
	json_t *args = json_loads(args_json, 0, &jerr);
	char *cause = NULL;
	int rc;

	if (args == NULL) {
		diag("bad test JSON %s: %s", args_json, jerr.text);
		return false;
	}
	if (ev != NULL)
		memset(ev, 0, sizeof *ev);
	rc = session_call(s, cmd, args, CALL_MS, on_event, ev, end, &cause);
	if (rc != FP_OK) {
		diag("%s %s: %s", cmd, args_json, cause ? cause : "?");
		free(cause);
		return false;
	}
	return true;
}

static char *
dump(json_t *j)
{
	char *s = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;

	return s ? s : strdup("(null)");
}

static bool
end_ok(struct proto_msg *end, const char *what)
{
	if (end->ok)
		return true;
	diag("%s failed: %s: %s", what, end->kind ? end->kind : "?", end->error ? end->error : "?");
	return false;
}

static bool
data_has(struct proto_msg *end, const char *needle)
{
	char *s = dump(end->root);
	bool r = strstr(s, needle) != NULL;

	if (!r)
		diag("no '%s' in %.600s", needle, s);
	free(s);
	return r;
}

static int raw_connect(void);

static struct session *
connect_session(void)
{
	struct session *s = NULL;
	char *cause = NULL;

	int fd = raw_connect();

	if (fd < 0) {
		diag("connect %s: %s", sock_path, strerror(errno));
		return NULL;
	}
	if (session_open(getpid(), fd, 5000, &s, &cause) != FP_OK) {
		diag("session_open: %s", cause ? cause : "?");
		free(cause);
		return NULL;
	}
	return s;
}

/* The workload's tick counter, through getglobal -e. */
static long long
ticks(struct session *s)
{
	struct proto_msg end;
	long long v = -1;
	const char *val;

	if (!call(s, "getglobal", "{\"module\": \"__main__\", \"field\": \"G_STATE\", "
	    "\"expr\": \"target['ticks']\"}", &end, NULL))
		return -1;
	val = json_string_value(json_object_get(json_object_get(end.data, "value"), "r"));
	if (end.ok && val == NULL) {
		char *d = dump(end.data);

		diag("ticks: unexpected value %s", d);
		free(d);
	}
	if (end.ok && val != NULL)
		v = atoll(val);
	proto_msg_clear(&end);
	return v;
}

/* ---- raw frames ------------------------------------------------------------ */

static int
raw_connect(void)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, sock_path, sizeof sa.sun_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool
raw_send(int fd, const void *p, size_t n)
{
	const unsigned char *b = p;
	ssize_t w;

	while (n > 0) {
		w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return false;
		b += w;
		n -= (size_t)w;
	}
	return true;
}

static bool
raw_frame(int fd, const char *payload, size_t n)
{
	unsigned char h[4] = {
		(unsigned char)(n >> 24), (unsigned char)(n >> 16),
		(unsigned char)(n >> 8), (unsigned char)n,
	};

	return raw_send(fd, h, 4) && raw_send(fd, payload, n);
}

static bool
raw_json(int fd, const char *json)
{
	return raw_frame(fd, json, strlen(json));
}

/*
 * Read until the agent closes (or timeout_ms): the type of every message it
 * sent, in *types (bit per enum proto_type); whether it closed; the last
 * error text.
 */
static bool
raw_drain(int fd, int timeout_ms, unsigned *types, char *errtext, size_t errlen)
{
	struct proto_decoder d;
	struct proto_msg msg;
	unsigned char buf[65536];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char err[200];
	bool closed = false;
	int waited = 0, rc;
	ssize_t n;

	*types = 0;
	if (errtext != NULL && errlen > 0)
		errtext[0] = '\0';
	proto_decoder_init(&d, PROTO_MAX_TO_CLIENT);
	while (waited < timeout_ms) {
		rc = poll(&pfd, 1, 50);
		if (rc == 0) {
			waited += 50;
			continue;
		}
		n = recv(fd, buf, sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			closed = true;
			break;
		}
		if (proto_decoder_feed(&d, buf, (size_t)n) != 0)
			break;
		while ((rc = proto_decoder_next(&d, &msg, err, sizeof err)) == 1) {
			*types |= 1u << msg.type;
			if (msg.type == PROTO_ERROR && errtext != NULL)
				snprintf(errtext, errlen, "%s", msg.error);
			proto_msg_clear(&msg);
		}
		if (rc < 0) {
			diag("the agent sent a bad frame: %s", err);
			break;
		}
	}
	proto_decoder_free(&d);
	return closed;
}

/* Send bytes, expect an error message and the agent closing the connection. */
static void
expect_refused(const char *what, const void *bytes, size_t n, const char *hello_first,
    const char *why_contains)
{
	char errtext[300];
	unsigned types;
	bool closed;
	int fd = raw_connect();

	if (fd < 0) {
		ok(0, "%s: connect", what);
		return;
	}
	if (hello_first != NULL)
		raw_json(fd, hello_first);
	raw_send(fd, bytes, n);
	closed = raw_drain(fd, 5000, &types, errtext, sizeof errtext);
	ok(closed && (types & (1u << PROTO_ERROR)) && strstr(errtext, why_contains) != NULL,
	    "%s: refused with an error and closed (\"%s\")", what, errtext);
	close(fd);
}

static const char hello_json[] = "{\"t\": \"hello\", \"proto\": 1, \"client\": \"harness\"}";

static void
raw_tests(void)
{
	static const char garbage[] = "GET / HTTP/1.1\r\nHost: agent\r\n\r\n";
	static const unsigned char zero_len[4] = { 0, 0, 0, 0 };
	unsigned char big_hdr[4] = { 0x00, 0x20, 0x00, 0x00 };	/* 2 MiB > 1 MiB */
	unsigned char *blob;
	size_t blob_len = (size_t)3 << 20;
	int fd, i;
	unsigned types;
	bool closed;

	expect_refused("garbage bytes", garbage, sizeof garbage - 1, NULL, "");
	expect_refused("empty frame", zero_len, sizeof zero_len, NULL, "protocol error");
	expect_refused("not JSON", "\0\0\0\x05{{{{{", 9, NULL, "protocol error");
	expect_refused("JSON array", "\0\0\0\x02[]", 6, NULL, "protocol error");
	fd = raw_connect();
	raw_json(fd, "{\"t\":\"req\",\"id\":1,\"cmd\":\"x\",\"args\":{}}");
	{
		char errtext[300];

		closed = raw_drain(fd, 5000, &types, errtext, sizeof errtext);
		ok(closed && strstr(errtext, "first message must be hello") != NULL,
		    "a request before hello: refused (\"%s\")", errtext);
	}
	close(fd);

	/* A version mismatch. */
	fd = raw_connect();
	raw_json(fd, "{\"t\":\"hello\",\"proto\":99}");
	{
		char errtext[300];

		closed = raw_drain(fd, 5000, &types, errtext, sizeof errtext);
		ok(closed && strstr(errtext, "protocol version mismatch") != NULL,
		    "protocol version 99: refused (\"%s\")", errtext);
	}
	close(fd);

	{
		static const char *const bad[] = {
			"{\"t\":\"req\",\"id\":0,\"cmd\":\"getglobal\",\"args\":{}}",
			"{\"t\":\"req\",\"id\":1,\"cmd\":\"\",\"args\":{}}",
			"{\"t\":\"req\",\"id\":1,\"cmd\":\"getglobal\",\"args\":[1,2]}",
			"{\"t\":\"req\",\"id\":9007199254740993,\"cmd\":\"getglobal\"}",
			"{\"t\":\"pong\",\"id\":1}",
			"{\"t\":\"hello\",\"proto\":1}",
			"{\"t\":\"nope\",\"id\":1}",
			"{\"t\":7}",
			"\"just a string\"",
		};

		for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
			int f2 = raw_connect();
			char errtext[300];

			raw_json(f2, hello_json);
			raw_json(f2, bad[i]);
			closed = raw_drain(f2, 5000, &types, errtext, sizeof errtext);
			ok(closed && (types & (1u << PROTO_ERROR)) && (types & (1u << PROTO_HELLO)),
			    "after hello, %s: refused (\"%s\")", bad[i], errtext);
			close(f2);
		}
	}

	/* Oversized: refused from the header; then megabytes more are discarded. */
	blob = malloc(blob_len);
	memset(blob, 'A', blob_len);
	fd = raw_connect();
	raw_json(fd, hello_json);
	raw_send(fd, big_hdr, 4);
	(void)raw_send(fd, blob, blob_len);	/* may fail once the agent closes */
	{
		char errtext[300];

		closed = raw_drain(fd, 8000, &types, errtext, sizeof errtext);
		ok(closed && (types & (1u << PROTO_ERROR)), "oversized frame (2 MiB header + 3 MiB): "
		    "refused and closed (\"%s\")", errtext);
	}
	close(fd);
	free(blob);

	/* Truncated: a header promising 100 bytes, 10 sent, then EOF. */
	fd = raw_connect();
	raw_json(fd, hello_json);
	raw_send(fd, "\0\0\0\x64{\"t\":\"ping", 14);
	shutdown(fd, SHUT_WR);
	closed = raw_drain(fd, 5000, &types, NULL, 0);
	ok(closed, "truncated frame then EOF: the agent closed");
	close(fd);

	/* A frame split byte by byte: still a ping answered by a pong. */
	fd = raw_connect();
	{
		unsigned char f[200];
		const char *p = "{\"t\":\"ping\",\"id\":5}";
		size_t n = strlen(hello_json), m = strlen(p), k;
		unsigned char *q = f;

		q[0] = 0; q[1] = 0; q[2] = (unsigned char)(n >> 8); q[3] = (unsigned char)n;
		memcpy(q + 4, hello_json, n);
		q += 4 + n;
		q[0] = 0; q[1] = 0; q[2] = 0; q[3] = (unsigned char)m;
		memcpy(q + 4, p, m);
		q += 4 + m;
		for (k = 0; k < (size_t)(q - f); k++) {
			raw_send(fd, f + k, 1);
			if (k % 16 == 0)
				sleep_ms(1);
		}
		raw_drain(fd, 1000, &types, NULL, 0);
		ok((types & (1u << PROTO_HELLO)) && (types & (1u << PROTO_PONG)),
		    "hello and ping split byte by byte: hello and pong");
	}
	close(fd);

	/* Connections that never say hello, beyond the agent's limit of 32. */
	{
		int fds[40], nref = 0;

		for (i = 0; i < 40; i++)
			fds[i] = raw_connect();
		for (i = 0; i < 40; i++) {
			char errtext[300];

			if (fds[i] < 0)
				continue;
			if (i >= 30) {
				raw_drain(fds[i], 300, &types, errtext, sizeof errtext);
				if (strstr(errtext, "too many") != NULL)
					nref++;
			}
		}
		for (i = 0; i < 40; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		ok(nref >= 1, "40 silent connections: %d refused as too many", nref);
	}
}

/* ---- main ------------------------------------------------------------------ */

/*
 * os.fork() with the agent serving (forkhooks.c, server.c): its threads
 * park before and resume after, in the parent; in the child, dormant, it
 * starts again when fp_agent_start() is called there with another
 * directory, and answers a request.  Returns the child's exit status.
 */
static const char fork_py[] =
	"import ctypes, json, os, socket, struct, time, warnings\n"
	"def _fp_fork_check(agent, d):\n"
	"    with warnings.catch_warnings():\n"
	"        warnings.simplefilter('ignore')\n"
	"        pid = os.fork()\n"
	"    if pid:\n"
	"        return os.waitpid(pid, 0)[1]\n"
	"    good = False\n"
	"    try:\n"
	"        ctypes.CDLL(agent).fp_agent_start(d.encode())\n"
	"        p = d + '/agent.sock'\n"
	"        for _ in range(1000):\n"
	"            if os.path.exists(p):\n"
	"                break\n"
	"            time.sleep(0.01)\n"
	"        s = socket.socket(socket.AF_UNIX)\n"
	"        s.settimeout(20)\n"
	"        s.connect(p)\n"
	"        def send(o):\n"
	"            b = json.dumps(o).encode()\n"
	"            s.sendall(struct.pack('>I', len(b)) + b)\n"
	"        def recv():\n"
	"            n = struct.unpack('>I', s.recv(4, socket.MSG_WAITALL))[0]\n"
	"            return json.loads(s.recv(n, socket.MSG_WAITALL))\n"
	"        send({'t': 'hello', 'proto': 1})\n"
	"        hello = recv()\n"
	"        send({'t': 'req', 'id': 1, 'cmd': 'getglobal', 'args': {'module': 'os', 'field': 'name'}})\n"
	"        m = recv()\n"
	"        good = hello.get('pid') == os.getpid() and m.get('ok') and m['data']['value'] == {'r': \"'posix'\"}\n"
	"    finally:\n"
	"        os._exit(0 if good else 1)\n";

static long
fork_check(const char *agent, const char *child_dir)
{
	PyObject *main, *fn, *r;
	long status = -1;

	if (PyRun_SimpleString(fork_py) != 0)
		return -1;
	main = PyImport_AddModule("__main__");
	fn = main ? PyObject_GetAttrString(main, "_fp_fork_check") : NULL;
	r = fn ? PyObject_CallFunction(fn, "ss", agent, child_dir) : NULL;
	if (r != NULL)
		status = PyLong_AsLong(r);
	else
		PyErr_Print();
	Py_XDECREF(r);
	Py_XDECREF(fn);
	return status;
}

int
main(int argc, char **argv)
{
	char dir[] = "/tmp/fp-agent-asan-XXXXXX";
	void (*start)(const char *);
	struct session *s, *s2;
	struct proto_msg end;
	struct events ev;
	struct stat st;
	PyThreadState *ts;
	void *lib;
	long long t0, t1;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s fpagent-cp3X.so\n", argv[0]);
		return 2;
	}
	/* Python's own output would mix with TAP: keep it quiet and unbuffered. */
	setenv("PYTHONUNBUFFERED", "1", 1);
	unsetenv("PYTHONSTARTUP");
	Py_InitializeEx(0);
	ok(PyRun_SimpleString(workload_py) == 0, "the workload runs (Python %s)", Py_GetVersion());
	ts = PyEval_SaveThread();	/* from here on, the GIL is the agent's to take */

	if (mkdtemp(dir) == NULL) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return done_testing();
	}
	snprintf(sock_path, sizeof sock_path, "%s/agent.sock", dir);

	/* As the injector does: dlopen(RTLD_NOW), dlsym, call with the directory. */
	lib = dlopen(argv[1], RTLD_NOW);
	if (!ok(lib != NULL, "dlopen %s", argv[1])) {
		diag("%s", dlerror());
		return done_testing();
	}
	*(void **)&start = dlsym(lib, "fp_agent_start");
	if (!ok(start != NULL, "dlsym fp_agent_start"))
		return done_testing();
	ok(dlsym(lib, "agent_send") == NULL && dlsym(lib, "proto_encode") == NULL,
	    "the agent exports nothing else");
	start(dir);
	start(dir);	/* a second start is a no-op */
	for (i = 0; i < 1000 && stat(sock_path, &st) != 0; i++)
		sleep_ms(10);
	ok(stat(sock_path, &st) == 0 && (st.st_mode & 0777) == 0600, "the agent listens on %s (0600)",
	    sock_path);

	s = connect_session();
	if (!ok(s != NULL, "hello through session_open"))
		return done_testing();
	diag("agent %s, build %s, python %s", session_info(s)->agent, session_info(s)->build,
	    session_info(s)->python);
	ok(strncmp(Py_GetVersion(), session_info(s)->python, strlen(session_info(s)->python)) == 0 &&
	    session_info(s)->pid == getpid(), "the hello names this interpreter and process");
	ok(session_has_cap(s, "getglobal") && session_has_cap(s, "console"), "caps include getglobal, console");

	/* getglobal, with every formatting option. */
	if (call(s, "getglobal", "{\"module\": \"__main__\", \"field\": \"G_STATE\"}", &end, NULL)) {
		ok(end_ok(&end, "getglobal") && data_has(&end, "\"type\":\"dict\"") &&
		    data_has(&end, "workload"), "getglobal __main__ G_STATE");
		proto_msg_clear(&end);
	} else {
		ok(0, "getglobal __main__ G_STATE");
	}
	{
		static const char *const opts[] = {
			"", ", \"depth\": 4", ", \"depth\": 4, \"verbose\": true", ", \"raw\": true",
			", \"depth\": 99", ", \"depth\": -5", ", \"depth\": 4, \"raw\": true, \"verbose\": true",
		};
		char args[300];
		size_t k;

		for (k = 0; k < sizeof opts / sizeof opts[0]; k++) {
			snprintf(args, sizeof args, "{\"module\": \"__main__\", \"field\": \"G_TRICKY\"%s}",
			    opts[k]);
			if (call(s, "getglobal", args, &end, NULL)) {
				ok(end_ok(&end, "getglobal G_TRICKY"), "getglobal G_TRICKY%s", opts[k]);
				proto_msg_clear(&end);
			} else {
				ok(0, "getglobal G_TRICKY%s", opts[k]);
			}
		}
	}
	if (call(s, "getglobal", "{\"module\": \"__main__\", \"class\": \"BadRepr\", \"field\": \"boom\"}",
	    &end, NULL)) {
		ok(end.ok, "getglobal of a class attribute that is a property");
		proto_msg_clear(&end);
	} else {
		ok(0, "getglobal of a property");
	}
	if (call(s, "getglobal", "{\"module\": \"__main__\", \"field\": \"G_TRICKY\", "
	    "\"expr\": \"target['bad'].boom\"}", &end, NULL)) {
		ok(!end.ok && strcmp(end.kind, "raised") == 0 && strstr(end.error, "property raised"),
		    "getglobal -e that raises: %s", end.error ? end.error : "?");
		proto_msg_clear(&end);
	} else {
		ok(0, "getglobal -e that raises");
	}
	if (call(s, "getglobal", "{\"module\": \"nosuchmodule\", \"field\": \"x\"}", &end, NULL)) {
		ok(!end.ok && strcmp(end.kind, "notfound") == 0, "getglobal of a missing module: notfound");
		proto_msg_clear(&end);
	} else {
		ok(0, "getglobal of a missing module");
	}
	if (call(s, "getglobal", "{\"module\": \"__main__\", \"class\": \"Widget..x\", \"field\": \"y\","
	    " \"expr\": \"(((\"}", &end, NULL)) {
		ok(!end.ok, "getglobal with a malformed class path: %s", end.error ? end.error : "?");
		proto_msg_clear(&end);
	} else {
		ok(0, "getglobal with a malformed class path");
	}

	/* execute: output streamed, then the exception. */
	if (call(s, "execute", "{\"code\": \"print('before')\\nraise ValueError('boom')\"}", &end, &ev)) {
		ok(!end.ok && strcmp(end.kind, "raised") == 0 && strstr(end.error, "ValueError: boom") &&
		    strstr(ev.out, "before\n") != NULL,
		    "execute that raises: output \"before\", then %s", end.error ? end.error : "?");
		proto_msg_clear(&end);
	} else {
		ok(0, "execute that raises");
	}
	if (call(s, "execute", "{\"code\": \"import sys\\nsys.stdout.write('x' * 3000000)\\n"
	    "def f(n):\\n    return f(n + 1)\\nf(0)\"}", &end, &ev)) {
		ok(!end.ok && strstr(end.error, "RecursionError") && ev.n > 1,
		    "execute: 3 MB of output (%d events) and a RecursionError", ev.n);
		proto_msg_clear(&end);
	} else {
		ok(0, "execute: big output and recursion");
	}
	if (call(s, "execute", "{\"code\": \"def f(:\"}", &end, NULL)) {
		ok(!end.ok && strstr(end.error, "SyntaxError"), "execute: SyntaxError");
		proto_msg_clear(&end);
	} else {
		ok(0, "execute: SyntaxError");
	}

	/* console: a namespace per connection. */
	if (call(s, "console", "{\"code\": \"x = 41\"}", &end, NULL) && end_ok(&end, "console")) {
		proto_msg_clear(&end);
		if (call(s, "console", "{\"code\": \"x + 1\"}", &end, &ev)) {
			ok(end.ok && strcmp(ev.out, "42\n") == 0, "console keeps its namespace: x + 1 -> %.*s",
			    (int)strcspn(ev.out, "\n"), ev.out);
			proto_msg_clear(&end);
		} else {
			ok(0, "console x + 1");
		}
	} else {
		ok(0, "console x = 41");
	}
	if (call(s, "console", "{\"code\": \"if True:\"}", &end, NULL)) {
		ok(end.ok && data_has(&end, "incomplete"), "console: an incomplete statement");
		proto_msg_clear(&end);
	} else {
		ok(0, "console incomplete");
	}
	if (call(s, "console", "{\"code\": \"1/0\"}", &end, NULL)) {
		ok(!end.ok && strstr(end.error, "ZeroDivisionError"), "console: a statement that raises");
		proto_msg_clear(&end);
	} else {
		ok(0, "console 1/0");
	}

	/* vmtool, threads, module, an unknown command. */
	if (call(s, "vmtool", "{\"action\": \"forceGc\"}", &end, NULL)) {
		ok(end_ok(&end, "forceGc") && json_is_integer(json_object_get(end.data, "collected")),
		    "vmtool forceGc");
		proto_msg_clear(&end);
	} else {
		ok(0, "vmtool forceGc");
	}
	if (call(s, "vmtool", "{\"action\": \"getInstances\", \"module\": \"__main__\", "
	    "\"class\": \"Widget\", \"limit\": -1, \"depth\": 2}", &end, NULL)) {
		ok(end_ok(&end, "getInstances") && json_integer_value(json_object_get(end.data, "count")) == 3,
		    "vmtool getInstances Widget: 3");
		proto_msg_clear(&end);
	} else {
		ok(0, "vmtool getInstances");
	}
	if (call(s, "vmtool", "{\"action\": \"nope\"}", &end, NULL)) {
		ok(!end.ok && strcmp(end.kind, "usage") == 0, "vmtool with an unknown action");
		proto_msg_clear(&end);
	} else {
		ok(0, "vmtool nope");
	}
	if (call(s, "threads", "{\"locals\": true, \"asyncio\": true}", &end, NULL)) {
		ok(end_ok(&end, "threads") && data_has(&end, "fp-harness-workload"), "threads with locals");
		proto_msg_clear(&end);
	} else {
		ok(0, "threads");
	}
	if (call(s, "module", "{\"path\": \"/nonexistent/x.py\"}", &end, NULL)) {
		ok(!end.ok && strcmp(end.kind, "notfound") == 0, "module of a file not imported");
		proto_msg_clear(&end);
	} else {
		ok(0, "module");
	}
	if (call(s, "frobnicate", "{}", &end, NULL)) {
		ok(!end.ok && strcmp(end.kind, "usage") == 0, "an unknown command: usage");
		proto_msg_clear(&end);
	} else {
		ok(0, "unknown command");
	}

	/* Cancel a statement that never returns. */
	{
		json_t *args = json_pack("{s:s}", "code", "import time\nwhile True:\n    time.sleep(0.01)");
		char *cause = NULL;
		uint64_t id;
		int rc;

		rc = session_send(s, "execute", args, &id, &cause);
		sleep_ms(300);
		if (rc == FP_OK)
			rc = session_cancel(s, id, &cause);
		while (rc == FP_OK) {
			rc = session_next(s, id, CALL_MS, &end, &cause);
			if (rc != FP_OK || end.root == NULL || end.type == PROTO_END)
				break;
			proto_msg_clear(&end);
		}
		ok(rc == FP_OK && end.root != NULL && !end.ok && strcmp(end.kind, "cancelled") == 0,
		    "cancel of a running loop: cancelled");
		if (rc == FP_OK)
			proto_msg_clear(&end);
		free(cause);
	}

	/* A client that disconnects mid-request, and one mid-frame. */
	s2 = connect_session();
	if (s2 != NULL) {
		json_t *args = json_pack("{s:s}", "code", "import time\nfor i in range(200):\n"
		    "    print(i)\n    time.sleep(0.005)");
		uint64_t id;

		session_send(s2, "execute", args, &id, NULL);
		sleep_ms(100);
		session_close(s2);
	}
	s2 = connect_session();
	if (s2 != NULL) {
		session_send(s2, "console", json_pack("{s:s}", "code", "y = 1"), &(uint64_t){ 0 }, NULL);
		session_send(s2, "console", json_pack("{s:s}", "code", "sum(range(10**6))"),
		    &(uint64_t){ 0 }, NULL);
		session_close(s2);	/* before the answers: their console namespace is dropped */
	}
	{
		int fd = raw_connect();

		raw_json(fd, hello_json);
		raw_send(fd, "\0\0\0\x40{\"t\":\"req\",\"id\":3,", 20);
		close(fd);
	}
	sleep_ms(600);
	ok(s2 != NULL, "clients that left mid-request and mid-frame");

	raw_tests();

	/* Many requests in flight on one connection, more than the workers. */
	{
		struct proto_decoder d;
		struct proto_msg msg;
		unsigned char buf[65536];
		char req[200], err[200];
		int fd = raw_connect(), nend = 0, nbusy = 0, waited = 0;
		ssize_t n;

		raw_json(fd, hello_json);
		for (i = 1; i <= 12; i++) {
			snprintf(req, sizeof req, "{\"t\":\"req\",\"id\":%d,\"cmd\":\"execute\","
			    "\"args\":{\"code\":\"import time\\ntime.sleep(0.3)\"}}", i);
			raw_json(fd, req);
		}
		proto_decoder_init(&d, PROTO_MAX_TO_CLIENT);
		while (nend < 12 && waited < CALL_MS) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };

			if (poll(&pfd, 1, 100) == 0) {
				waited += 100;
				continue;
			}
			if ((n = recv(fd, buf, sizeof buf, 0)) <= 0 || proto_decoder_feed(&d, buf, (size_t)n) != 0)
				break;
			while (proto_decoder_next(&d, &msg, err, sizeof err) == 1) {
				if (msg.type == PROTO_END) {
					nend++;
					if (!msg.ok && strcmp(msg.kind, "busy") == 0)
						nbusy++;
					else if (!msg.ok)
						diag("request %d: %s: %s", (int)msg.id, msg.kind, msg.error);
				}
				proto_msg_clear(&msg);
			}
		}
		proto_decoder_free(&d);
		close(fd);
		ok(nend == 12 && nbusy >= 4, "12 requests at once on 8 workers: 12 ends, %d busy", nbusy);
	}

	/* The program forks: parked and resumed here, started anew in the child. */
	{
		char child_dir[sizeof dir + 8], child_sock[sizeof dir + 24];

		snprintf(child_dir, sizeof child_dir, "%s-child", dir);
		mkdir(child_dir, 0700);
		PyEval_RestoreThread(ts);
		ok(fork_check(argv[1], child_dir) == 0, "os.fork(): the child starts its own agent and it answers");
		ts = PyEval_SaveThread();
		t0 = ticks(s);
		ok(t0 > 0, "the parent's agent answers after the fork (ticks %lld)", t0);
		snprintf(child_sock, sizeof child_sock, "%s/agent.sock", child_dir);
		unlink(child_sock);
		rmdir(child_dir);
	}

	/* The application kept running through all of it. */
	t0 = ticks(s);
	sleep_ms(100);
	t1 = ticks(s);
	ok(t0 > 0 && t1 > t0, "the workload thread still runs (ticks %lld -> %lld)", t0, t1);
	session_close(s);

	/*
	 * Shutdown.  The connections are closed; give the workers the moment
	 * they need to drop the closed connections' consoles (they take the
	 * GIL for that), then finalize with the agent's threads present.
	 */
	sleep_ms(500);
	PyEval_RestoreThread(ts);
	ok(PyRun_SimpleString("G_RUN = False\n_worker.join()\n") == 0, "the workload stops");
	ok(Py_FinalizeEx() == 0, "Py_FinalizeEx with the agent loaded");

	/* The agent outlives the interpreter: it answers, refusing Python work. */
	s = connect_session();
	if (ok(s != NULL, "hello after Py_Finalize")) {
		if (call(s, "getglobal", "{\"module\": \"__main__\", \"field\": \"G_STATE\"}", &end, NULL)) {
			ok(!end.ok && strcmp(end.kind, "shutdown") == 0,
			    "a request after Py_Finalize: %s", end.kind ? end.kind : "ok?");
			proto_msg_clear(&end);
		} else {
			ok(0, "a request after Py_Finalize");
		}
		session_close(s);
	}
	sleep_ms(100);
	{
		char err_path[sizeof dir + 16];

		snprintf(err_path, sizeof err_path, "%s/agent.err", dir);
		unlink(err_path);
		unlink(sock_path);
		rmdir(dir);
	}
	return done_testing();
}
