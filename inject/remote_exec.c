#include "config.h"

#include "inject/remote_exec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "core/memread.h"
#include "core/procfs.h"
#include "core/pyruntime.h"
#include "core/util.h"

#define ENV_DISABLE	"PYTHON_DISABLE_REMOTE_DEBUG"
#define XOPT_DISABLE	"disable-remote-debug"
/* _PY_EVAL_PLEASE_STOP_BIT (1U << 5), Include/internal/pycore_ceval.h of 3.14 and 3.15. */
#define EVAL_PLEASE_STOP_BIT	(1ull << 5)
#define MAX_THREADS	4096

bool
remote_exec_applies(uint32_t python_hex)
{
	return (python_hex >> 24) == 3 && ((python_hex >> 16) & 0xff) >= 14;
}

/* The next NUL-terminated string of a /proc block; NULL at its end. */
static const char *
next_string(const char **p, const char *end, size_t *lenp)
{
	const char *s = *p, *nul;

	if (s >= end)
		return NULL;
	nul = memchr(s, '\0', (size_t)(end - s));
	*lenp = nul ? (size_t)(nul - s) : (size_t)(end - s);
	*p = s + *lenp + 1;
	return s;
}

static bool
str_is(const char *s, size_t len, const char *want)
{
	return len == strlen(want) && memcmp(s, want, len) == 0;
}

bool
remote_exec_env_disables(const char *environ, size_t len)
{
	const char *p = environ, *end = environ + len, *s;
	size_t n, klen = strlen(ENV_DISABLE);

	while ((s = next_string(&p, end, &n)) != NULL) {
		if (n > klen && memcmp(s, ENV_DISABLE, klen) == 0 && s[klen] == '=')
			return n > klen + 1;	/* the first one wins, as getenv() */
		if (n == klen && memcmp(s, ENV_DISABLE, klen) == 0)
			return false;		/* no '=': not a variable */
	}
	return false;
}

/* -X disable-remote-debug, with or without a value. */
static bool
xoption_disables(const char *v, size_t len)
{
	size_t klen = strlen(XOPT_DISABLE);

	return len >= klen && memcmp(v, XOPT_DISABLE, klen) == 0 && (len == klen || v[klen] == '=');
}

/*
 * CPython's option parser (Python/getopt.c): short options may be grouped
 * ("-uX opt", "-Xopt"); -c and -m end the interpreter's options, and so do
 * the script, "-" and "--"; -W, -X and --check-hash-based-pycs take a value,
 * attached or as the next argument.
 */
bool
remote_exec_cmdline_disables(const char *cmdline, size_t len)
{
	const char *p = cmdline, *end = cmdline + len, *a, *v;
	size_t n, vn, i;

	if (next_string(&p, end, &n) == NULL)	/* argv[0] */
		return false;
	while ((a = next_string(&p, end, &n)) != NULL) {
		if (n < 2 || a[0] != '-' || str_is(a, n, "--"))
			return false;
		if (a[1] == '-') {
			if (str_is(a, n, "--check-hash-based-pycs") && next_string(&p, end, &vn) == NULL)
				return false;
			continue;
		}
		for (i = 1; i < n; i++) {
			if (a[i] == 'c' || a[i] == 'm')
				return false;
			if (a[i] != 'X' && a[i] != 'W')
				continue;
			if (i + 1 < n) {
				v = a + i + 1;
				vn = n - i - 1;
			} else if ((v = next_string(&p, end, &vn)) == NULL) {
				return false;
			}
			if (a[i] == 'X' && xoption_disables(v, vn))
				return true;
			break;
		}
	}
	return false;
}

char *
remote_exec_refusal(pid_t pid)
{
	char path[64], *env, *cmd, *why = NULL;
	size_t elen, clen;
	int e;

	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	env = read_file_str(path, &elen);
	if (env == NULL) {
		e = errno;
		if (!procfs_exists(pid))
			return NULL;	/* gone: the caller says so */
		return xasprintf("cannot read the environment of process %d (%s) to check whether it "
		    "disabled remote debugging with " ENV_DISABLE "; not attaching to it", (int)pid,
		    strerror(e));
	}
	if (remote_exec_env_disables(env, elen)) {
		why = xasprintf("process %d was started with " ENV_DISABLE " set in its environment: "
		    "whoever started it asked that no debugger attach to it, and flight_profiler "
		    "respects that (it does not fall back to ptrace); to allow attaching, restart it "
		    "without " ENV_DISABLE "; commands that read it from outside (stack) still work",
		    (int)pid);
	}
	free(env);
	if (why != NULL)
		return why;
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	cmd = read_file_str(path, &clen);
	if (cmd != NULL && remote_exec_cmdline_disables(cmd, clen))
		why = xasprintf("process %d was started with -X " XOPT_DISABLE ": whoever started it "
		    "asked that no debugger attach to it, and flight_profiler respects that (it does "
		    "not fall back to ptrace); to allow attaching, restart it without "
		    "-X " XOPT_DISABLE "; commands that read it from outside (stack) still work",
		    (int)pid);
	free(cmd);
	return why;
}

int
remote_exec_check_path(const char *path, int64_t size, char **cause)
{
	size_t len = strlen(path);

	if (path[0] != '/')
		return fail(cause, FP_ERR, "the script path %s is not absolute", path);
	if (size <= 0 || len >= (uint64_t)size)
		return fail(cause, FP_ERR, "the script path %s (%zu bytes) does not fit the "
		    "interpreter's %lld-byte buffer (NUL included)", path, len, (long long)size);
	return FP_OK;
}

/* Write all of buf or fail (-1, errno). */
static int
mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)(uintptr_t)buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -1;
	if ((size_t)n != len) {
		errno = EFAULT;
		return -1;
	}
	return 0;
}

static enum remote_exec_result
unavailable(char **cause, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static enum remote_exec_result
unavailable(char **cause, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	fail(cause, FP_ERR, "%s", msg);
	free(msg);
	return REMOTE_EXEC_UNAVAILABLE;
}

/*
 * The thread to ask: the GIL holder runs bytecode and checks its eval
 * breaker soonest; with the GIL free every thread is blocked, and the main
 * thread (as sys.remote_exec() picks) is as good as any.
 */
static bool
pick_thread(struct pyruntime *rt, uint64_t interp, struct remote_exec_request *req)
{
	const struct py_offsets *o = &rt->off;
	uint64_t gil = 0, holder = 0, t, chosen, main = 0, first = 0, found_holder = 0;
	uint64_t found_main = 0;
	int32_t locked = 0, tid;
	size_t n;

	if (mem_read_u64(rt->pid, interp + (uint64_t)o->interp_gil_ptr, &gil) == 0 &&
	    mem_ptr_ok(gil, 8) &&
	    mem_read(rt->pid, gil + (uint64_t)o->gil_locked, &locked, sizeof locked) == 0 &&
	    locked == 1)
		mem_read_u64(rt->pid, gil + (uint64_t)o->gil_last_holder, &holder);
	mem_read_u64(rt->pid, interp + (uint64_t)o->interp_threads_main, &main);

	/* Only a thread state found in the interpreter's list is written to. */
	if (mem_read_u64(rt->pid, interp + (uint64_t)o->interp_tstate_head, &t) != 0)
		return false;
	for (n = 0; t != 0 && n < MAX_THREADS && mem_ptr_ok(t, 8); n++) {
		if (first == 0)
			first = t;
		if (t == holder)
			found_holder = t;
		if (t == main)
			found_main = t;
		if (mem_read_u64(rt->pid, t + (uint64_t)o->tstate_next, &t) != 0)
			break;
	}
	chosen = found_holder ? found_holder : found_main ? found_main : first;
	if (chosen == 0)
		return false;
	snprintf(req->why_thread, sizeof req->why_thread, "%s",
	    chosen == found_holder ? "it holds the GIL" :
	    chosen == found_main ? "it is the main thread" : "it is the first thread");
	req->tstate = chosen;
	req->tid = 0;
	if (mem_read(rt->pid, chosen + (uint64_t)o->tstate_native_thread_id, &tid, sizeof tid) == 0)
		req->tid = tid;
	req->pending = chosen + (uint64_t)o->tstate_remote_debugger_support +
	    (uint64_t)o->debugger_pending_call;
	return true;
}

static enum remote_exec_result
write_error(pid_t pid, const char *what, char **cause)
{
	int e = errno;
	char *why;
	enum remote_exec_result r;

	if (e == EPERM || e == EACCES) {
		why = procfs_explain_eperm(pid);
		r = unavailable(cause, "cannot write the %s into process %d: permission denied (%s)",
		    what, (int)pid, why);
		free(why);
		return r;
	}
	return unavailable(cause, "cannot write the %s into process %d: %s", what, (int)pid,
	    strerror(e));
}

enum remote_exec_result
remote_exec_send(pid_t pid, const char *script_path, struct remote_exec_request *req,
    char **cause)
{
	struct pyruntime *rt = NULL;
	const struct py_offsets *o;
	enum remote_exec_result r;
	uint64_t interp, breaker, path_addr;
	int32_t enabled = 0, pending = 0, one = 1;
	char *why = NULL;

	memset(req, 0, sizeof *req);
	req->pid = pid;
	if ((why = remote_exec_refusal(pid)) != NULL) {
		fail(cause, FP_EPERM, "%s", why);
		free(why);
		return REMOTE_EXEC_REFUSED;
	}
	if (pyruntime_open(pid, &rt, &why) != FP_OK) {
		r = unavailable(cause, "%s", why);
		free(why);
		return r;
	}
	o = &rt->off;
	if (!remote_exec_applies(rt->version_hex)) {
		/* Below 3.14 nothing reads the request: never write one. */
		r = unavailable(cause, "process %d runs CPython %s, which predates PEP 768 (3.14)",
		    (int)pid, rt->version);
		goto out;
	}
	if (!o->remote_debug) {
		r = unavailable(cause, "the _Py_DebugOffsets of process %d (CPython %s) publish no "
		    "usable debugger_support section", (int)pid, rt->version);
		goto out;
	}
	if (pyruntime_main_interp(rt, &interp, &why) != FP_OK) {
		r = unavailable(cause, "%s", why);
		goto out;
	}
	if (mem_read(pid, interp + (uint64_t)o->interp_remote_debug_enabled, &enabled,
	    sizeof enabled) != 0) {
		r = unavailable(cause, "cannot read whether process %d allows remote debugging: %s",
		    (int)pid, strerror(errno));
		goto out;
	}
	if (enabled != 1) {
		/*
		 * Neither switch a user sets is present (checked above): the
		 * build lacks remote debugging or the program embedding Python
		 * turned it off.  Not a user's refusal: other ways may be used.
		 */
		r = unavailable(cause, "remote debugging is off in process %d (its "
		    "sys.is_remote_debug_enabled() is False: CPython built --without-remote-debug, "
		    "or an application embedding Python turned it off)", (int)pid);
		goto out;
	}
	if (remote_exec_check_path(script_path, o->debugger_script_path_size, &why) != FP_OK) {
		r = unavailable(cause, "%s", why);
		goto out;
	}
	if (!pick_thread(rt, interp, req)) {
		r = unavailable(cause, "process %d has no Python thread to ask", (int)pid);
		goto out;
	}
	if (mem_read(pid, req->pending, &pending, sizeof pending) != 0) {
		r = unavailable(cause, "cannot read the remote debugger state of process %d: %s",
		    (int)pid, strerror(errno));
		goto out;
	}
	if (pending != 0) {
		r = unavailable(cause, "another debugger's request is already pending in thread %d "
		    "of process %d", (int)req->tid, (int)pid);
		goto out;
	}

	/*
	 * The order of sys.remote_exec(): the path (NUL included), then the
	 * flag, then the eval-breaker bit.  The bit is set by read, or, write:
	 * process_vm_writev cannot do an atomic or.  A bit the interpreter
	 * sets in between can be lost (a GIL drop request, which its waiter
	 * repeats each switch interval) and one it cleared can come back (a
	 * spurious check of pending work); CPython's own client has the same
	 * window.
	 */
	path_addr = req->tstate + (uint64_t)o->tstate_remote_debugger_support +
	    (uint64_t)o->debugger_script_path;
	if (mem_write(pid, path_addr, script_path, strlen(script_path) + 1) != 0) {
		r = write_error(pid, "script path", cause);
		goto out;
	}
	if (mem_write(pid, req->pending, &one, sizeof one) != 0) {
		r = write_error(pid, "pending-call flag", cause);
		goto out;
	}
	if (mem_read_u64(pid, req->tstate + (uint64_t)o->tstate_eval_breaker, &breaker) != 0 ||
	    (breaker |= EVAL_PLEASE_STOP_BIT,
	    mem_write(pid, req->tstate + (uint64_t)o->tstate_eval_breaker, &breaker,
		sizeof breaker) != 0)) {
		r = write_error(pid, "eval-breaker bit", cause);
		remote_exec_retract(req);
		goto out;
	}
	r = REMOTE_EXEC_SENT;
out:
	free(why);
	pyruntime_close(rt);
	return r;
}

int
remote_exec_wait_taken(const struct remote_exec_request *req, int timeout_ms, char **cause)
{
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000;
	struct timespec pause = { 0, 1000 * 1000 };
	int32_t pending;

	for (;;) {
		if (mem_read(req->pid, req->pending, &pending, sizeof pending) != 0) {
			if (!procfs_exists(req->pid))
				return fail(cause, FP_EEXITED, "process %d exited", (int)req->pid);
			return fail(cause, FP_ERR, "thread %d of process %d ended before it ran the "
			    "request", (int)req->tid, (int)req->pid);
		}
		if (pending == 0)
			return FP_OK;
		if (now_ns() > deadline)
			return fail(cause, FP_ERR, "thread %d of process %d (asked because %s) did not "
			    "run Python code within %.1f s: it is blocked in a call", (int)req->tid,
			    (int)req->pid, req->why_thread, timeout_ms / 1000.0);
		nanosleep(&pause, NULL);
	}
}

bool
remote_exec_retract(const struct remote_exec_request *req)
{
	int32_t pending = 0, zero = 0;

	if (mem_read(req->pid, req->pending, &pending, sizeof pending) != 0 || pending == 0)
		return false;
	return mem_write(req->pid, req->pending, &zero, sizeof zero) == 0;
}

/* A Python bytes literal of s: printable ASCII as is, the rest escaped. */
static void
py_bytes(struct sbuf *b, const char *s)
{
	const unsigned char *p;

	sbuf_add(b, "b'");
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '\'' && *p != '\\')
			sbuf_addn(b, (const char *)p, 1);
		else
			sbuf_addf(b, "\\x%02x", *p);
	}
	sbuf_add(b, "'");
}

char *
remote_exec_bootstrap_source(const char *dir, const char *lib)
{
	struct sbuf b = { 0 };

	/*
	 * Run by the interpreter on one of its threads, holding the GIL.
	 * fp_agent_start() only starts the agent's own thread and returns.
	 * Nothing may be printed (the target's stderr is not ours) and no
	 * name may be left behind in the namespace it runs in.
	 */
	sbuf_add(&b,
	    "# flight_profiler: load the agent (PEP 768 bootstrap, see inject/remote_exec.c)\n"
	    "def _flight_profiler_boot(d, lib):\n"
	    "    import os\n"
	    "    try:\n"
	    "        import ctypes\n"
	    "        ctypes.CDLL(os.fsdecode(lib)).fp_agent_start(d)\n"
	    "    except BaseException as e:\n"
	    "        try:\n"
	    "            with open(os.path.join(d, b'bootstrap.err'), 'w') as f:\n"
	    "                f.write('%s: %s\\n' % (type(e).__name__, e))\n"
	    "        except BaseException:\n"
	    "            pass\n"
	    "_flight_profiler_boot(");
	py_bytes(&b, dir);
	sbuf_add(&b, ", ");
	py_bytes(&b, lib);
	sbuf_add(&b, ")\ndel _flight_profiler_boot\n");
	return sbuf_steal(&b);
}
