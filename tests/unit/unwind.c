/*
 * tstop + unwind unit test, against real processes: a C child of ours that
 * sleeps in fp_test_sleeper() (unwound, and flooded with queued signals
 * while we stop and resume it), a pid that does not exist, a child stopped
 * by SIGSTOP, a vfork parent that cannot stop in time (state D), and a real
 * CPython 3.12 asleep in time.sleep() (skipped when there is none).
 *
 * Built with -g so the child's frames have file:line from debug info.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/elfimage.h"
#include "core/procfs.h"
#include "core/pystack.h"
#include "core/tstop.h"
#include "core/unwind.h"
#include "core/util.h"
#include "tests/unit/tap.h"

#define STOP_TIMEOUT_MS 2000
#define NSIG_SENT 200

void fp_test_sleeper(void);
void fp_test_child(int fd);

static int signal_fd = -1;

/* Each queued signal's value goes down the pipe: the parent counts them. */
static void
on_rtsig(int sig, siginfo_t *si, void *uc)
{
	int v = si->si_value.sival_int;

	(void)sig;
	(void)uc;
	(void)!write(signal_fd, &v, sizeof v);
}

/* Where the child sleeps: the test looks for this frame by name. */
__attribute__((noinline)) void
fp_test_sleeper(void)
{
	struct timespec ts = { 60, 0 };

	for (;;)
		nanosleep(&ts, NULL);
}

__attribute__((noinline)) void
fp_test_child(int fd)
{
	struct sigaction sa;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal_fd = fd;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_rtsig;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGRTMIN, &sa, NULL);
	fp_test_sleeper();
}

/* State letter of /proc/<pid>/stat, 0 if gone. */
static char
proc_state(pid_t pid)
{
	char path[64], *text, *p, c = 0;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((text = read_file_str(path, NULL)) == NULL)
		return 0;
	if ((p = strrchr(text, ')')) != NULL && p[1] == ' ')
		c = p[2];
	free(text);
	return c;
}

/* The system call a blocked thread is in, -1 if running or unknown. */
static long
proc_syscall(pid_t pid)
{
	char path[64], *text;
	long nr = -1;

	snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
	if ((text = read_file_str(path, NULL)) == NULL)
		return -1;
	if (text[0] >= '0' && text[0] <= '9')
		nr = strtol(text, NULL, 10);
	free(text);
	return nr;
}

/* The thread is in a signal-delivery-stop (needs root: /proc/pid/stack). */
static bool
in_signal_delivery_stop(pid_t pid)
{
	char path[64], *text;
	bool yes;

	snprintf(path, sizeof path, "/proc/%d/stack", (int)pid);
	if ((text = read_file_str(path, NULL)) == NULL)
		return false;
	/* An interrupt stop goes through ptrace_do_notify, a signal's does not. */
	yes = strstr(text, "ptrace_stop") != NULL &&
	    strstr(text, "ptrace_do_notify") == NULL;
	free(text);
	return yes;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Wait until pid is asleep in (clock_)nanosleep. */
static bool
wait_asleep(pid_t pid, int timeout_ms)
{
	int waited;
	long nr;

	for (waited = 0; waited < timeout_ms; waited += 5) {
		nr = proc_syscall(pid);
		if (proc_state(pid) == 'S' && (nr == 230 || nr == 35))
			return true;
		sleep_ms(5);
	}
	return false;
}

static bool
wait_state(pid_t pid, char want, int timeout_ms)
{
	int waited;

	for (waited = 0; waited < timeout_ms; waited += 5) {
		if (proc_state(pid) == want)
			return true;
		sleep_ms(5);
	}
	return false;
}

static void
kill_and_reap(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		continue;
}

/* Not inlined (the build may say -O2): main must call a real frame. */
static __attribute__((noinline)) pid_t
spawn_sleeper(int *pipe_rd)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds) != 0)
		return -1;
	if ((pid = fork()) == 0) {
		close(fds[0]);
		fp_test_child(fds[1]);
		_exit(0);
	}
	close(fds[1]);
	if (pipe_rd != NULL)
		*pipe_rd = fds[0];
	else
		close(fds[0]);
	return pid;
}

static const struct native_frame *
find_function(const struct native_frame *f, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (f[i].function != NULL && strcmp(f[i].function, name) == 0)
			return &f[i];
	return NULL;
}

static void
dump_frames(const struct native_frame *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		diag("  #%-2zu 0x%012llx %s+0x%llx (%s) %s:%d%s", i,
		    (unsigned long long)f[i].pc,
		    f[i].function ? f[i].function : "??",
		    (unsigned long long)f[i].offset,
		    f[i].module ? f[i].module : "?",
		    f[i].file ? f[i].file : "", f[i].line,
		    f[i].is_eval ? " [eval]" : "");
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static __attribute__((noinline)) void
test_c_child(void)
{
	struct native_frame *frames = NULL, *again = NULL;
	const struct native_frame *f;
	struct unwinder *u = NULL;
	size_t n = 0, n2 = 0, i;
	char *cause = NULL;
	int rd, got, held, stops, status, rc;
	bool inorder;
	pid_t sender;
	bool same;
	pid_t pid;

	pid = spawn_sleeper(&rd);
	ok(pid > 0 && wait_asleep(pid, 5000), "C child %d sleeps in nanosleep", (int)pid);

	rc = tstop_stop(pid, STOP_TIMEOUT_MS, &cause);
	if (!ok(rc == 0, "tstop_stop stops the child")) {
		diag("%s", cause);
		free(cause);
		cause = NULL;
	}
	ok(procfs_tracer(pid) == getpid() && proc_state(pid) == 't',
	    "while stopped: traced by us, state t (got %c)", proc_state(pid));
	rc = tstop_stop(pid, STOP_TIMEOUT_MS, &cause);
	ok(rc == FP_ERR && cause != NULL, "stopping it twice fails: %s", cause);
	free(cause);
	cause = NULL;

	rc = unwinder_open(pid, &u, &cause);
	if (!ok(rc == 0, "unwinder_open")) {
		diag("%s", cause);
		free(cause);
		cause = NULL;
	}
	if (u != NULL) {
		rc = unwinder_thread(u, pid, &frames, &n, &cause);
		if (!ok(rc == 0 && n > 3, "unwinder_thread: %zu frames", n)) {
			diag("%s", cause ? cause : "");
			free(cause);
			cause = NULL;
		}
		dump_frames(frames, n);
		f = find_function(frames, n, "fp_test_sleeper");
		ok(f != NULL && ends_with(f->file, "unwind.c") && f->line > 0 &&
		    f->module != NULL && strstr(f->module, "unwind") != NULL,
		    "fp_test_sleeper with file:line from debug info (%s:%d)",
		    f && f->file ? f->file : "-", f ? f->line : 0);
		f = find_function(frames, n, "main");
		ok(f != NULL && ends_with(f->file, "unwind.c") && f->line > 0,
		    "main with file:line (%s:%d)", f && f->file ? f->file : "-",
		    f ? f->line : 0);
		ok(n > 0 && frames[0].module != NULL &&
		    strncmp(frames[0].module, "libc", 4) == 0,
		    "innermost frame is in libc (%s in %s)",
		    n && frames[0].function ? frames[0].function : "?",
		    n && frames[0].module ? frames[0].module : "?");
		f = find_function(frames, n, "fp_test_child");
		ok(f != NULL && f > find_function(frames, n, "fp_test_sleeper"),
		    "innermost first: fp_test_child is outside fp_test_sleeper");

		rc = unwinder_thread(u, pid, &again, &n2, &cause);
		same = rc == 0 && n2 == n;
		for (i = 0; same && i < n; i++)
			same = again[i].pc == frames[i].pc && again[i].line == frames[i].line;
		ok(same, "unwinding again (from the caches) gives the same stack");
		native_frames_free(again, n2);
		native_frames_free(frames, n);
	}

	ok(tstop_resume(pid) == 0, "tstop_resume");
	ok(procfs_tracer(pid) == 0, "after resume: TracerPid is 0");
	ok(wait_state(pid, 'S', 2000) && proc_state(pid) != 'T',
	    "after resume: state %c, running or asleep again", proc_state(pid));
	ok(tstop_resume(pid) == FP_ERR, "resuming a thread we do not hold fails");

	/* Unwinding a thread that is not stopped is refused, not attempted. */
	if (u != NULL) {
		rc = unwinder_thread(u, pid, &frames, &n, &cause);
		ok(rc != 0 && cause != NULL && n == 0, "unwinding a running thread "
		    "fails: %s", cause);
		free(cause);
		cause = NULL;
	}

	/*
	 * Signals arriving while we stop and resume must all be delivered, with
	 * their siginfo: another process queues NSIG_SENT real-time signals,
	 * each with its number as value, while we stop and resume the child in a
	 * loop.  A signal dequeued between our seize and our interrupt makes the
	 * stop its signal-delivery-stop; tstop must hand it back at detach.
	 */
	if ((sender = fork()) == 0) {
		union sigval v;

		for (i = 0; i < NSIG_SENT; i++) {
			v.sival_int = (int)i;
			while (sigqueue(pid, SIGRTMIN, v) == -1 && errno == EAGAIN)
				sleep_ms(1);
			if (i % 4 == 0)
				sleep_ms(1);
		}
		_exit(0);
	}
	stops = held = 0;
	while (waitpid(sender, &status, WNOHANG) == 0) {
		if (tstop_stop(pid, STOP_TIMEOUT_MS, &cause) != 0) {
			diag("%s", cause);
			free(cause);
			cause = NULL;
			break;
		}
		stops++;
		if (in_signal_delivery_stop(pid))
			held++;
		tstop_resume(pid);
	}
	for (got = 0, inorder = true; got < NSIG_SENT; got++) {
		struct pollfd pfd = { rd, POLLIN, 0 };
		int v;

		if (poll(&pfd, 1, 2000) != 1 || read(rd, &v, sizeof v) != sizeof v)
			break;
		if (v != got)
			inorder = false;
	}
	ok(got == NSIG_SENT && inorder, "%d queued signals sent during %d stops: "
	    "%d delivered, in order with their values", NSIG_SENT, stops, got);
	diag("%d of the stops were signal-delivery-stops (signal handed back "
	    "at detach)", held);
	ok(procfs_tracer(pid) == 0, "and the child is not traced");

	/* tstop_release_all lets go of everything. */
	rc = tstop_stop(pid, STOP_TIMEOUT_MS, &cause);
	tstop_release_all();
	ok(rc == 0 && procfs_tracer(pid) == 0 && tstop_resume(pid) == FP_ERR,
	    "tstop_release_all detaches a stopped thread");
	free(cause);
	cause = NULL;

	unwinder_close(u);
	close(rd);
	kill_and_reap(pid);
}

static void
test_gone(void)
{
	struct unwinder *u = NULL;
	char *cause = NULL;
	pid_t pid;
	int rc, status;

	/* A pid that existed a moment ago: reaped, so nobody has it now. */
	if ((pid = fork()) == 0)
		_exit(0);
	waitpid(pid, &status, 0);
	rc = tstop_stop(pid, STOP_TIMEOUT_MS, &cause);
	ok((rc == FP_EEXITED || rc == FP_ENOPROC) && cause != NULL,
	    "tstop_stop on a pid that does not exist: %d, %s", rc, cause);
	free(cause);
	cause = NULL;
	rc = unwinder_open(pid, &u, &cause);
	ok(rc != 0 && u == NULL && cause != NULL,
	    "unwinder_open on it fails: %s", cause);
	free(cause);
	cause = NULL;

	rc = tstop_stop(getpid(), STOP_TIMEOUT_MS, &cause);
	ok(rc != 0 && cause != NULL, "tstop_stop on ourselves fails: %s", cause);
	free(cause);
}

static void
test_group_stopped(void)
{
	char *cause = NULL;
	pid_t pid;
	int rc;

	pid = spawn_sleeper(NULL);
	ok(pid > 0 && wait_asleep(pid, 5000), "another child asleep");
	kill(pid, SIGSTOP);
	ok(wait_state(pid, 'T', 2000), "SIGSTOP stops it (state T)");
	rc = tstop_stop(pid, STOP_TIMEOUT_MS, &cause);
	ok(rc != 0 && cause != NULL && strstr(cause, "stopped") != NULL,
	    "tstop_stop reports the stopped process: %s", cause);
	free(cause);
	/* Give a wrongly woken thread a moment to show it. */
	sleep_ms(50);
	ok(proc_state(pid) == 'T' && procfs_tracer(pid) == 0,
	    "it is left stopped (state %c) and untraced", proc_state(pid));
	kill(pid, SIGCONT);
	ok(wait_state(pid, 'S', 2000), "SIGCONT wakes it again");
	kill_and_reap(pid);
}

/*
 * A thread that cannot stop in time: a vfork parent waits for its child in
 * an uninterruptible (killable) sleep, state D, which our interrupt does not
 * end.  tstop_stop must give up after its timeout and let the thread go as
 * soon as it does stop.
 */
static void
test_slow_stop(void)
{
	char *cause = NULL;
	bool stopped, released;
	pid_t pid;
	int rc;

	if ((pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (vfork() == 0) {
			struct timespec ts = { 0, 500000000 };

			nanosleep(&ts, NULL);
			_exit(0);
		}
		fp_test_sleeper();
	}
	ok(wait_state(pid, 'D', 2000), "a vfork parent waits in state D");
	rc = tstop_stop(pid, 100, &cause);
	ok(rc == FP_ERR && cause != NULL && strstr(cause, "did not stop") != NULL,
	    "tstop_stop gives up after 100 ms: %s", cause);
	free(cause);
	if (rc == 0)
		tstop_resume(pid);	/* it was not in D after all */
	stopped = wait_state(pid, 't', 3000);
	ok(stopped, "once the vfork child exits, it reaches its stop (state %c)",
	    proc_state(pid));
	tstop_resume(pid + 1000000);	/* any call sweeps; this tid is none */
	released = procfs_tracer(pid) == 0 && wait_state(pid, 'S', 2000);
	ok(released, "the next tstop call lets it go: untraced, state %c",
	    proc_state(pid));
	kill_and_reap(pid);
}

static double
ms_since(uint64_t t0)
{
	return (double)(now_ns() - t0) / 1e6;
}

static void
test_python(void)
{
	const char *py = getenv("FP_TEST_PYTHON312");
	struct native_frame *frames = NULL;
	const struct native_frame *eval = NULL, *sleep = NULL;
	struct unwinder *u = NULL;
	char *cause = NULL;
	size_t n = 0, i, total = 0;
	uint64_t t0;
	double cold, warm;
	int rc, ok20 = 0, k;
	pid_t pid;

	if (py == NULL)
		py = "/root/.pyenv/versions/3.12.1/bin/python3";
	if (access(py, X_OK) != 0) {
		char *why = xasprintf("no CPython 3.12 at %s", py);

		skip(why, "python: stopped and unwound");
		skip(why, "python: _PyEval_EvalFrameDefault");
		skip(why, "python: libc sleep function");
		skip(why, "python: 20 more rounds");
		skip(why, "python: untraced after");
		free(why);
		return;
	}
	if ((pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(py, py, "-c", "import time; time.sleep(30)", (char *)NULL);
		_exit(127);
	}
	if (!wait_asleep(pid, 10000))
		diag("python %d did not reach time.sleep (state %c)", (int)pid,
		    proc_state(pid));

	/* Everything once, from nothing: open, stop, unwind, resume. */
	t0 = now_ns();
	rc = unwinder_open(pid, &u, &cause);
	if (rc == 0 && (rc = tstop_stop(pid, STOP_TIMEOUT_MS, &cause)) == 0) {
		rc = unwinder_thread(u, pid, &frames, &n, &cause);
		tstop_resume(pid);
	}
	cold = ms_since(t0);
	if (!ok(rc == 0 && n > 5, "python %d: stopped and unwound, %zu frames",
	    (int)pid, n))
		diag("%s", cause ? cause : "");
	free(cause);
	cause = NULL;
	dump_frames(frames, n);
	for (i = 0; i < n; i++) {
		if (eval == NULL && frames[i].is_eval)
			eval = &frames[i];
		if (sleep == NULL && frames[i].function != NULL &&
		    strstr(frames[i].function, "sleep") != NULL &&
		    frames[i].module != NULL && strncmp(frames[i].module, "libc", 4) == 0)
			sleep = &frames[i];
	}
	ok(eval != NULL && strncmp(eval->function, "_PyEval_EvalFrameDefault", 24) == 0 &&
	    eval->file != NULL && eval->line > 0,
	    "python: _PyEval_EvalFrameDefault, is_eval, with file:line (%s:%d)",
	    eval && eval->file ? eval->file : "-", eval ? eval->line : 0);
	ok(sleep != NULL, "python: libc sleep function (%s)",
	    sleep ? sleep->function : "none");
	native_frames_free(frames, n);

	/* And again with the same unwinder: what a sampler pays. */
	t0 = now_ns();
	for (k = 0; k < 20 && u != NULL; k++) {
		if (tstop_stop(pid, STOP_TIMEOUT_MS, &cause) != 0)
			continue;
		if (unwinder_thread(u, pid, &frames, &n, &cause) == 0 && n > 5)
			ok20++;
		total += n;
		native_frames_free(frames, n);
		tstop_resume(pid);
	}
	warm = ms_since(t0);
	ok(ok20 == 20, "python: 20 more rounds of stop, unwind, resume");
	free(cause);
	diag("python 3.12: open+stop+unwind+symbolize+resume once: %.2f ms; "
	    "stop+unwind+resume x20 with one unwinder: %.2f ms (%.3f ms each, "
	    "%zu frames in all)", cold, warm, warm / 20, total);
	ok(procfs_tracer(pid) == 0 && proc_state(pid) != 'T' && proc_state(pid) != 't',
	    "python: untraced and running after");
	unwinder_close(u);
	kill_and_reap(pid);
}

struct bias_check {
	struct proc_maps maps;
	int checked, wrong;
};

/* One object of ours: the bias from its maps and file is ld.so's l_addr. */
static int
check_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct bias_check *bc = arg;
	const struct elf_segment *segs;
	struct elf_image *img;
	char path[PATH_MAX];
	uint64_t bias = 0;
	bool found = false;
	size_t i, n;
	ssize_t len;

	(void)size;
	/* /proc/self/maps has the real path, ld.so the one it was asked for. */
	if (info->dlpi_name[0] == '/') {
		if (realpath(info->dlpi_name, path) == NULL)
			return 0;
	} else if (info->dlpi_name[0] != '\0' || (len = readlink(
	    "/proc/self/exe", path, sizeof path - 1)) <= 0)
		return 0;	/* the vdso */
	else
		path[len] = '\0';
	if (elf_image_open(path, &img, NULL) != 0)
		return 0;
	segs = elf_image_segments(img, &n);
	for (i = 0; n > 0 && !found && i < bc->maps.n; i++)
		found = bc->maps.maps[i].path != NULL &&
		    strcmp(bc->maps.maps[i].path, path) == 0 &&
		    elf_load_bias(&segs[0], elf_image_is_dyn(img),
		    &bc->maps.maps[i], &bias);
	bc->checked++;
	if (!found || bias != info->dlpi_addr) {
		bc->wrong++;
		diag("%s: bias %#llx, ld.so says %#llx", path,
		    (unsigned long long)bias, (unsigned long long)info->dlpi_addr);
	}
	elf_image_close(img);
	return 0;
}

/* elf_load_bias() for every object mapped in this very process. */
static void
test_load_bias(void)
{
	struct bias_check bc = { .checked = 0 };

	if (!ok(procfs_maps_read(getpid(), &bc.maps, NULL) == 0, "read our maps"))
		return;
	dl_iterate_phdr(check_bias, &bc);
	ok(bc.checked >= 2 && bc.wrong == 0, "load bias of %d objects as ld.so "
	    "has it (%d wrong)", bc.checked, bc.wrong);
	procfs_maps_free(&bc.maps);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_load_bias();
	test_c_child();
	test_gone();
	test_group_stopped();
	test_slow_stop();
	test_python();
	tstop_release_all();
	return done_testing();
}
