/*
 * tresume: which registers get the restart code, and a real child in
 * epoll_wait stopped and resumed by tstop, which must not see EINTR.
 */
#include "config.h"

#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/tresume.h"
#include "core/tstop.h"
#include "core/util.h"
#include "tests/unit/tap.h"

#define ERESTARTNOHAND 514

/* nop; syscall; nop: a pc after the `syscall` and one that is not. */
static const unsigned char code[] = { 0x90, 0x0f, 0x05, 0x90 };

static bool
fixed(long nr, long rax, const unsigned char *pc, long *after)
{
	struct user_regs_struct r;
	bool changed;

	memset(&r, 0, sizeof r);
	r.orig_rax = (uint64_t)nr;
	r.rax = (uint64_t)rax;
	r.rip = (uint64_t)(uintptr_t)pc;
	changed = tresume_fix_regs(getpid(), &r);
	*after = (long)r.rax;
	return changed;
}

static void
test_regs(void)
{
	const unsigned char *after_syscall = code + 3, *elsewhere = code + 2;
	long rax;

	ok(fixed(SYS_epoll_wait, -EINTR, after_syscall, &rax) &&
	    rax == -ERESTARTNOHAND, "epoll_wait broken off: restart code");
	ok(fixed(SYS_epoll_pwait, -EINTR, after_syscall, &rax) &&
	    rax == -ERESTARTNOHAND, "epoll_pwait broken off: restart code");
	ok(fixed(441, -EINTR, after_syscall, &rax) && rax == -ERESTARTNOHAND,
	    "epoll_pwait2 broken off: restart code");
	ok(!fixed(SYS_select, -EINTR, after_syscall, &rax) && rax == -EINTR,
	    "another call's EINTR is left alone");
	ok(!fixed(SYS_epoll_wait, 3, after_syscall, &rax) && rax == 3,
	    "an epoll_wait that returned events is left alone");
	ok(!fixed(SYS_epoll_wait, -ERESTARTNOHAND, after_syscall, &rax) &&
	    rax == -ERESTARTNOHAND, "a restart code is left alone");
	ok(!fixed(SYS_epoll_wait, -EINTR, elsewhere, &rax) && rax == -EINTR,
	    "not after a syscall instruction (an exception's error code): "
	    "left alone");
	ok(!fixed(-1, -EINTR, after_syscall, &rax) && rax == -EINTR,
	    "not in a system call: left alone");
}

/* In /proc: is thread `pid` in system call `nr`? */
static bool
in_syscall(pid_t pid, long nr)
{
	char path[64], buf[64];
	FILE *f;
	bool yes = false;

	snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return false;
	if (fgets(buf, sizeof buf, f) != NULL)
		yes = strtol(buf, NULL, 10) == nr;
	fclose(f);
	return yes;
}

static void
test_child(void)
{
	struct epoll_event ev;
	struct timespec nap = { 0, 1000000 };
	char *cause = NULL;
	int status = 0, i, rc;
	pid_t pid;

	if ((pid = fork()) == 0) {
		/* One 400 ms wait, as C calls it: no retry on EINTR. */
		int ep = epoll_create1(0), r = epoll_wait(ep, &ev, 1, 400);

		_exit(r == -1 ? errno : 100 + r);
	}
	for (i = 0; i < 300 && !in_syscall(pid, SYS_epoll_wait); i++)
		nanosleep(&nap, NULL);
	rc = tstop_stop(pid, 2000, &cause);
	ok(rc == 0, "tstop_stop stops the child in epoll_wait: %s",
	    cause ? cause : "");
	free(cause);
	if (rc == 0)
		ok(tstop_resume(pid) == 0, "tstop_resume");
	else
		ok(0, "tstop_resume (not stopped)");
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 100,
	    "the wait timed out normally (exit %d; %d would be EINTR)",
	    WIFEXITED(status) ? WEXITSTATUS(status) : -1, 4);
}

int
main(void)
{
	plan(11);
	test_regs();
	test_child();
	return tap_failed != 0;
}
