#include "config.h"

#include "inject/inject.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/elfimage.h"
#include "core/memread.h"
#include "core/procfs.h"
#include "core/tstop.h"
#include "core/unwind.h"
#include "core/util.h"
#include "inject/ptrace.h"
#include "inject/target.h"

#define DEFAULT_TIMEOUT_MS	10000
#define SCRATCH_SIZE		0x110000	/* strings + stack; an odd size the tests look for */
#define STRINGS_SIZE		8192
#define TARGET_RTLD_NOW		0x00002
#define TARGET_RTLD_DLOPEN	0x80000000	/* __RTLD_DLOPEN, for __libc_dlopen_mode */
#define RT_CONSISTENT		0
#define R_DEBUG_STATE_OFF	24	/* r_version, r_map, r_brk, r_state */
#define MAX_FRAMES_CHECKED	256

/*
 * Blocking system calls a thread sits in without holding any libc or
 * loader lock (its wrapper takes none).  Not futex: a thread waiting on a
 * futex may be waiting inside malloc or dlopen for another lock.
 */
static const long safe_syscalls[] = {
	SYS_nanosleep, SYS_clock_nanosleep, SYS_select, SYS_pselect6,
	SYS_poll, SYS_ppoll, SYS_epoll_wait, SYS_epoll_pwait,
	SYS_accept, SYS_accept4, SYS_read, SYS_recvfrom, SYS_recvmsg,
	SYS_wait4,
};

/*
 * A thread waiting on a Python lock: futex(FUTEX_WAIT or FUTEX_WAIT_BITSET)
 * reached from PyThread_acquire_lock_timed through libc's semaphore or
 * condition-variable wait alone (stack_unsafe() checks the stack).  Such a
 * thread holds no libc or loader lock -- it waits for a lock of Python's,
 * as a sleeping thread waits for time -- and it is where an idle program
 * (Event.wait, Queue.get, Thread.join, Lock.acquire) spends its life.
 * Other futex waits (malloc's arena lock, the loader's lock) are refused.
 */
#define FUTEX_CMD_MASK		0x7f	/* without PRIVATE and CLOCK_REALTIME */
#define FUTEX_WAIT_CMD		0
#define FUTEX_WAIT_BITSET_CMD	9
#define MAX_LIBC_UNDER_LOCK	6	/* wrapper, futex helper, sem/cond wait */

static bool
is_futex_wait(const struct user_regs_struct *r)
{
	return (int64_t)r->orig_rax == SYS_futex &&
	    ((r->rsi & FUTEX_CMD_MASK) == FUTEX_WAIT_CMD ||
	    (r->rsi & FUTEX_CMD_MASK) == FUTEX_WAIT_BITSET_CMD);
}

/* Why a thread was not a safe point, for the final message. */
struct verdicts {
	struct sbuf why;
	unsigned tried, loader_busy;
};

/* ---- is it a safe point? ----------------------------------------------- */

static bool
is_safe_syscall(long nr)
{
	size_t i;

	for (i = 0; i < FP_NELEM(safe_syscalls); i++)
		if (safe_syscalls[i] == nr)
			return true;
	return false;
}

static bool
in_python_text(const struct target *tg, uint64_t pc)
{
	return (tg->have_exe && module_contains(&tg->exe, pc)) ||
	    (tg->have_libpython && module_contains(&tg->libpython, pc));
}

enum frame_class { FRAME_LIBC, FRAME_LDSO, FRAME_EXE, FRAME_OTHER };

static enum frame_class
classify(const struct target *tg, uint64_t pc)
{
	if (module_contains(&tg->libc, pc))
		return FRAME_LIBC;
	if (tg->have_ldso && module_contains(&tg->ldso, pc))
		return FRAME_LDSO;
	if (tg->have_exe && module_contains(&tg->exe, pc))
		return FRAME_EXE;
	return FRAME_OTHER;
}

/*
 * The return addresses of the stopped thread, innermost first.  Only pcs,
 * read with core/unwind's unwinder: the CFI tables from the target's
 * memory, its stack through a page cache (process_vm_readv), so that the
 * thread is held a fraction of a millisecond, not the tens of milliseconds
 * of libunwind-ptrace's one PTRACE_PEEKDATA per word; symbolizing is left
 * out altogether.  0 when the stack cannot be read.
 */
static size_t
stack_pcs(const struct target *tg, pid_t tid, uint64_t *pcs, size_t max)
{
	struct native_frame *frames;
	size_t n = 0, i;

	if (tg->unw == NULL ||
	    unwinder_thread_pcs(tg->unw, tid, &frames, &n, NULL) != FP_OK)
		return 0;
	for (i = 0; i < n && i < max; i++)
		pcs[i] = frames[i].pc;
	native_frames_free(frames, n);
	return i;
}

/*
 * Look at the whole native stack: the thread must not be inside the loader
 * at any depth, and libc may appear only as the innermost system call
 * wrapper (in_syscall) and as the outermost thread entry (start_thread,
 * __libc_start_main, under _start).  A libc frame anywhere else means
 * libc called back into other code (a signal handler over malloc, qsort,
 * dl_iterate_phdr) and may hold a lock.  NULL if safe (or if the stack
 * cannot be unwound: then the instruction pointer alone decided), else
 * why not.
 */
static const char *
stack_unsafe(const struct target *tg, pid_t tid, bool in_syscall,
    bool lock_wait)
{
	uint64_t pcs[MAX_FRAMES_CHECKED];
	size_t n, i, k;

	n = stack_pcs(tg, tid, pcs, FP_NELEM(pcs));
	if (n == 0 && lock_wait)
		return "it waits on a futex and its stack could not be read";
	for (i = 0; i < n; i++)
		if (classify(tg, pcs[i]) == FRAME_LDSO)
			return "it is inside the dynamic loader";
	i = 0;
	if (lock_wait) {
		while (i < n && i < MAX_LIBC_UNDER_LOCK &&
		    classify(tg, pcs[i]) == FRAME_LIBC)
			i++;
		if (i == 0 || i == n || pcs[i] < tg->lock_wait.start ||
		    pcs[i] >= tg->lock_wait.end)
			return "it waits on a futex that is not a Python lock's";
		i++;
	} else if (in_syscall)
		while (i < n && i < 3 && classify(tg, pcs[i]) == FRAME_LIBC)
			i++;
	for (; i < n; i++) {
		if (classify(tg, pcs[i]) != FRAME_LIBC)
			continue;
		/* Only the thread entry may follow. */
		for (k = i; k < n; k++) {
			enum frame_class c = classify(tg, pcs[k]);

			if (c != FRAME_LIBC && !(c == FRAME_EXE && k == n - 1))
				return "libc is in the middle of its stack (a "
				    "callback or signal handler; libc may hold a "
				    "lock)";
		}
		break;
	}
	return NULL;
}

/* ---- running code in the target ---------------------------------------- */

static int
write_target(pid_t pid, uint64_t addr, const void *buf, size_t len,
    char **cause)
{
	struct iovec local = { (void *)buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };

	if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
		return fail(cause, FP_ERR, "cannot write to process %d at "
		    "0x%llx: %s", (int)pid, (unsigned long long)addr,
		    strerror(errno));
	return FP_OK;
}

static const char *
fault_name(const siginfo_t *si)
{
	static char buf[32];

	switch (si->si_signo) {
	case SIGSEGV:
		return "SIGSEGV";
	case SIGBUS:
		return "SIGBUS";
	case SIGILL:
		return "SIGILL";
	case SIGFPE:
		return "SIGFPE";
	case SIGTRAP:
		return "SIGTRAP";
	case SIGSYS:
		return "SIGSYS";
	}
	snprintf(buf, sizeof buf, "signal %d", si->si_signo);
	return buf;
}

static int
seccomp_refused(struct ptrace_thread *t, const char *what, char **cause)
{
	return fail(cause, FP_EPERM, "%s in process %d was refused by its "
	    "seccomp filter (SIGSYS); the process forbids what injection "
	    "needs: use the outside view only", what, (int)t->pid);
}

/*
 * After a system call single-stepped into a seccomp SIGSYS, the step's
 * SIGTRAP is still pending: detached, the thread would die of it.  Take
 * every pending trap off by running the thread at address 0 (no user
 * instruction runs: pending signals are delivered first, and then the
 * fetch at 0 faults); the fault at 0 says nothing is left.
 */
static void
drain_traps(struct ptrace_thread *t, uint64_t deadline)
{
	struct user_regs_struct r = t->regs;
	struct ptrace_stop stop;
	int i;

	r.rip = 0;
	r.orig_rax = (uint64_t)-1;
	r.eflags &= ~0x100ull;
	for (i = 0; i < 8; i++) {
		if (ptrace_thread_setregs(t, &r, NULL) != 0 ||
		    ptrace_thread_run(t, false, deadline, &stop, NULL) != 0 ||
		    ptrace_thread_getregs(t, &r, NULL) != 0)
			return;
		if (stop.kind == PTRACE_STOP_FAULT &&
		    stop.si.si_signo == SIGSEGV && r.rip == 0)
			return;
		r.rip = 0;
	}
}

/* Run one system call on the thread through libc's `syscall` instruction. */
static int
remote_syscall(struct ptrace_thread *t, const struct target *tg,
    uint64_t deadline, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
    uint64_t a3, uint64_t a4, uint64_t a5, int64_t *ret, char **cause)
{
	struct user_regs_struct r = t->regs;
	struct ptrace_stop stop;
	int rc;

	r.rax = (uint64_t)nr;
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	r.r10 = a3;
	r.r8 = a4;
	r.r9 = a5;
	r.orig_rax = (uint64_t)-1;	/* no restart of the interrupted call */
	r.rip = tg->syscall_insn;
	r.eflags &= ~0x100ull;		/* TF */
	if ((rc = ptrace_thread_setregs(t, &r, cause)) != 0)
		return rc;
	if ((rc = ptrace_thread_run(t, true, deadline, &stop, cause)) != 0)
		return rc;
	if (stop.kind == PTRACE_STOP_SECCOMP) {
		drain_traps(t, deadline > now_ns() + 500000000ull ? deadline :
		    now_ns() + 500000000ull);
		return seccomp_refused(t, "a system call", cause);
	}
	if ((rc = ptrace_thread_getregs(t, &r, cause)) != 0)
		return rc;
	if (stop.si.si_signo != SIGTRAP || r.rip != tg->syscall_insn + 2)
		return fail(cause, FP_ERR, "system call %ld in process %d "
		    "stopped with %s at 0x%llx instead of returning", nr,
		    (int)t->pid, fault_name(&stop.si), (unsigned long long)r.rip);
	*ret = (int64_t)r.rax;
	return FP_OK;
}

/*
 * Call fn(a0, a1) on the private stack whose top is `stack_top`, with a
 * return address of 0: the return faults at address 0, which is how we get
 * the thread back, with the result in rax.
 */
static int
remote_call(struct ptrace_thread *t, uint64_t stack_top, uint64_t deadline,
    const char *what, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t *ret,
    char **cause)
{
	struct user_regs_struct r = t->regs;
	struct ptrace_stop stop;
	uint64_t zero = 0;
	int rc;

	/* At entry rsp + 8 is 16-byte aligned, as after a call. */
	r.rsp = (stack_top & ~15ull) - 8;
	if ((rc = write_target(t->pid, r.rsp, &zero, sizeof zero, cause)) != 0)
		return rc;
	r.rip = fn;
	r.rdi = a0;
	r.rsi = a1;
	r.rax = 0;
	r.orig_rax = (uint64_t)-1;
	r.eflags &= ~(0x100ull | 0x400ull);	/* TF, DF */
	if ((rc = ptrace_thread_setregs(t, &r, cause)) != 0)
		return rc;
	if ((rc = ptrace_thread_run(t, false, deadline, &stop, cause)) != 0) {
		if (rc == FP_ERR && t->attached)
			return fail(cause, FP_ERR, "%s did not return in process "
			    "%d before the timeout (a lock held by another "
			    "thread?); the thread was pulled out of it", what,
			    (int)t->pid);
		return rc;
	}
	if (stop.kind == PTRACE_STOP_SECCOMP)
		return seccomp_refused(t, what, cause);
	if ((rc = ptrace_thread_getregs(t, &r, cause)) != 0)
		return rc;
	if (stop.si.si_signo != SIGSEGV || r.rip != 0)
		return fail(cause, FP_ERR, "%s crashed in process %d with %s at "
		    "0x%llx (address 0x%llx); the thread's registers were put "
		    "back", what, (int)t->pid, fault_name(&stop.si),
		    (unsigned long long)r.rip,
		    (unsigned long long)(uintptr_t)stop.si.si_addr);
	*ret = r.rax;
	return FP_OK;
}

/* Read a NUL-terminated string of the target (for dlerror()). */
static char *
read_cstring(pid_t pid, uint64_t addr)
{
	char buf[512];
	size_t i;

	if (!mem_ptr_ok(addr, 1))
		return xstrdup("(no message)");
	for (i = 0; i < sizeof buf - 1; i++)
		if (mem_read(pid, addr + i, &buf[i], 1) != 0 || buf[i] == '\0')
			break;
	buf[i] = '\0';
	return xstrdup(buf);
}

static char *
remote_dlerror(struct ptrace_thread *t, const struct target *tg,
    uint64_t stack_top, uint64_t deadline)
{
	uint64_t msg = 0;

	if (tg->private_dlopen || remote_call(t, stack_top, deadline, "dlerror",
	    tg->dlerror, 0, 0, &msg, NULL) != 0)
		return xstrdup("(no message)");
	return read_cstring(t->pid, msg);
}

/*
 * With the thread stopped at a safe point and its state saved: map the
 * scratch area, dlopen, dlsym, call, unmap.  Leaves the thread stopped
 * (release puts its registers back); returns an enum fp_status.
 */
static int
hijack(struct ptrace_thread *t, const struct target *tg, const char *lib,
    const char *symbol, const char *arg, uint64_t deadline, char **cause)
{
	uint64_t scratch = 0, top, handle = 0, fn = 0, errp = 0, ret, a_lib,
	    a_sym, a_arg = 0;
	size_t llib = strlen(lib) + 1, lsym = strlen(symbol) + 1,
	    larg = arg != NULL ? strlen(arg) + 1 : 0;
	int saved_errno = 0, rc, rc2;
	int64_t sret;
	char *strings, *msg;

	rc = remote_syscall(t, tg, deadline, SYS_mmap, 0, SCRATCH_SIZE,
	    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	    (uint64_t)-1, 0, &sret, cause);
	if (rc != 0)
		return rc;
	if (sret < 0 && sret > -4096)
		return fail(cause, FP_ERR, "mmap of %d bytes in process %d "
		    "failed: %s", SCRATCH_SIZE, (int)t->pid, strerror((int)-sret));
	scratch = (uint64_t)sret;
	top = scratch + SCRATCH_SIZE;

	/* Strings at the bottom, the stack growing down from the top. */
	strings = xcalloc(1, STRINGS_SIZE);
	a_lib = scratch;
	memcpy(strings, lib, llib);
	a_sym = a_lib + llib;
	memcpy(strings + llib, symbol, lsym);
	if (arg != NULL) {
		a_arg = a_sym + lsym;
		memcpy(strings + llib + lsym, arg, larg);
	}
	rc = write_target(t->pid, scratch, strings, llib + lsym + larg, cause);
	free(strings);
	if (rc != 0)
		goto unmap;

	/* dlopen sets errno even when it succeeds: keep the thread's. */
	if ((rc = remote_call(t, top, deadline, "__errno_location",
	    tg->errno_location, 0, 0, &errp, cause)) != 0)
		goto unmap;
	if (mem_read(t->pid, errp, &saved_errno, sizeof saved_errno) != 0)
		errp = 0;

	if (tg->private_dlopen)
		rc = remote_call(t, top, deadline, "__libc_dlopen_mode",
		    tg->dlopen, a_lib, TARGET_RTLD_NOW | TARGET_RTLD_DLOPEN,
		    &handle, cause);
	else
		rc = remote_call(t, top, deadline, "dlopen", tg->dlopen, a_lib,
		    TARGET_RTLD_NOW, &handle, cause);
	if (rc != 0)
		goto unmap;
	if (handle == 0) {
		msg = remote_dlerror(t, tg, top, deadline);
		rc = fail(cause, FP_ERR, "dlopen(\"%s\") failed in process %d: "
		    "%s", lib, (int)t->pid, msg);
		free(msg);
		goto unmap;
	}
	if ((rc = remote_call(t, top, deadline, "dlsym", tg->dlsym, handle,
	    a_sym, &fn, cause)) != 0)
		goto unmap;
	if (fn == 0) {
		msg = remote_dlerror(t, tg, top, deadline);
		rc = fail(cause, FP_ERR, "%s has no symbol %s (%s); it was "
		    "unloaded again", lib, symbol, msg);
		free(msg);
		if (tg->dlclose != 0)
			(void)remote_call(t, top, deadline, "dlclose",
			    tg->dlclose, handle, 0, &ret, NULL);
		goto unmap;
	}
	rc = remote_call(t, top, deadline, symbol, fn, a_arg, 0, &ret, cause);

unmap:
	if (errp != 0)
		(void)write_target(t->pid, errp, &saved_errno,
		    sizeof saved_errno, NULL);
	if (t->attached && t->stopped) {
		/* A little grace: the unmap must happen even after a timeout. */
		uint64_t d = deadline > now_ns() + 500000000ull ? deadline :
		    now_ns() + 500000000ull;

		rc2 = remote_syscall(t, tg, d, SYS_munmap, scratch, SCRATCH_SIZE,
		    0, 0, 0, 0, &sret, rc == 0 ? cause : NULL);
		if (rc == 0 && rc2 != 0)
			rc = rc2;
		else if (rc == 0 && sret != 0)
			rc = fail(cause, FP_ERR, "munmap in process %d failed: "
			    "%s", (int)t->pid, strerror((int)-sret));
	}
	return rc;
}

/* ---- choosing the thread ----------------------------------------------- */

enum attempt {
	ATTEMPT_DONE,		/* injected, or failed for good: see rc */
	ATTEMPT_NOT_SAFE,	/* let go; try another thread or moment */
};

/*
 * Stop `tid`, decide whether it is at a safe point, and if it is, inject.
 * `want_syscall`: it was seen blocked in an allow-listed system call.
 */
static enum attempt
attempt(const struct target *tg, pid_t tid, bool want_syscall,
    const char *lib, const char *symbol, const char *arg,
    uint64_t search_deadline, uint64_t deadline, struct verdicts *v,
    int *rc, char **cause)
{
	struct ptrace_thread t;
	struct user_regs_struct r;
	unsigned char insn[2];
	const char *why = NULL;
	bool job_stopped, in_syscall = false, lock_wait = false;
	int32_t state;
	uint64_t stop_deadline;
	char *msg = NULL;

	v->tried++;
	/* The stop lasts as long as the stack check: do the slow part before. */
	if (want_syscall && tg->unw != NULL)
		unwinder_warm(tg->unw, tid);
	stop_deadline = now_ns() + 200000000ull;
	if (stop_deadline > search_deadline)
		stop_deadline = search_deadline;
	*rc = ptrace_thread_seize(&t, tg->pid, tid, stop_deadline,
	    &job_stopped, &msg);
	if (*rc != 0) {
		if (job_stopped || *rc == FP_EPERM ||
		    (*rc == FP_EEXITED && !procfs_exists(tg->pid))) {
			if (job_stopped)
				*rc = fail(cause, FP_ERR, "process %d is stopped "
				    "(SIGSTOP or job control) and was left as it "
				    "was; resume it with `kill -CONT %d` and try "
				    "again", (int)tg->pid, (int)tg->pid);
			else {
				free(*cause);
				*cause = msg;
				msg = NULL;
			}
			free(msg);
			return ATTEMPT_DONE;
		}
		sbuf_addf(&v->why, "; thread %d: %s", (int)tid, msg);
		free(msg);
		return ATTEMPT_NOT_SAFE;
	}
	if (ptrace_thread_getregs(&t, &r, NULL) != 0) {
		why = "its registers could not be read";
		goto not_safe;
	}

	lock_wait = tg->lock_wait.end != 0 && is_futex_wait(&r);
	if ((int64_t)r.orig_rax >= 0 &&
	    (is_safe_syscall((long)r.orig_rax) || lock_wait) &&
	    !(tg->have_ldso && module_contains(&tg->ldso, r.rip)) &&
	    mem_read(tg->pid, r.rip - 2, insn, 2) == 0 &&
	    insn[0] == 0x0f && insn[1] == 0x05)
		in_syscall = true;	/* interrupted or just returned */
	else if (!in_python_text(tg, r.rip)) {
		why = want_syscall ? "it left its system call" :
		    "it was stopped outside Python's own code";
		goto not_safe;
	}
	if ((why = stack_unsafe(tg, tid, in_syscall, lock_wait && in_syscall))
	    != NULL)
		goto not_safe;
	/* Nobody may be in the middle of loading or unloading a library. */
	if (mem_read(tg->pid, tg->r_debug + R_DEBUG_STATE_OFF, &state,
	    sizeof state) != 0) {
		why = "the loader's r_debug could not be read";
		goto not_safe;
	}
	if (state != RT_CONSISTENT) {
		v->loader_busy++;
		why = "another thread is loading a library";
		goto not_safe;
	}

	/* A safe point: from here on, success or failure is final. */
	if ((*rc = ptrace_thread_save(&t, cause)) == 0) {
		*rc = hijack(&t, tg, lib, symbol, arg, deadline, cause);
	}
	if (*rc == 0)
		*rc = ptrace_thread_release(&t, cause);
	else {
		int rc2 = ptrace_thread_release(&t, &msg);

		if (rc2 != 0 && msg != NULL) {
			char *both = xasprintf("%s; also: %s", *cause, msg);

			free(*cause);
			*cause = both;
		}
		free(msg);
	}
	return ATTEMPT_DONE;

not_safe:
	sbuf_addf(&v->why, "; thread %d: %s", (int)tid, why);
	(void)ptrace_thread_release(&t, NULL);
	return ATTEMPT_NOT_SAFE;
}

/* ---- the entry point ----------------------------------------------------- */

/*
 * Whether pid maps `lib`: the same file by device and inode (st, when
 * given), or the same path (" (deleted)" when the file was removed since).
 */
static int
maps_library(pid_t pid, const char *lib, const struct stat *st, bool *found,
    char **cause)
{
	char path[64], *text, *line, *next;
	size_t len = strlen(lib);

	*found = false;
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if ((text = read_file_str(path, NULL)) == NULL)
		return fail(cause, procfs_exists(pid) ? FP_EPERM : FP_ENOPROC,
		    "cannot read %s: %s", path, strerror(errno));
	for (line = text; line != NULL && *line != '\0' && !*found; line = next) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[5];
		int n = 0;

		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end,
		    perms, &off, &maj, &min, &ino, &n) < 7)
			continue;
		if (st != NULL && ino != 0 && ino == (unsigned long long)st->st_ino &&
		    maj == major(st->st_dev) && min == minor(st->st_dev))
			*found = true;
		if (n > 0 && strncmp(line + n, lib, len) == 0 &&
		    (line[n + len] == '\0' || strcmp(line + n + len, " (deleted)") == 0))
			*found = true;
	}
	free(text);
	return FP_OK;
}

/*
 * Refuse a library that is already mapped (same file, by device and inode,
 * or by path): loading twice would start a second agent.
 */
static int
check_not_loaded(pid_t pid, const char *lib, char **cause)
{
	char *file;
	struct stat st;
	bool found;
	int rc;

	file = procfs_target_path(pid, lib);
	if (stat(file, &st) != 0) {
		int e = errno;

		free(file);
		return fail(cause, FP_ERR, "%s cannot be found in the mount "
		    "namespace of process %d: %s; give a path valid inside the "
		    "target (containers see their own files)", lib, (int)pid,
		    strerror(e));
	}
	free(file);
	if (!S_ISREG(st.st_mode))
		return fail(cause, FP_ERR, "%s is not a regular file", lib);
	if ((rc = maps_library(pid, lib, &st, &found, cause)) != FP_OK)
		return rc;
	if (found)
		return fail(cause, FP_ERR, "%s is already loaded in "
		    "process %d; it is never loaded twice (connect to "
		    "the agent already running there)", lib, (int)pid);
	return FP_OK;
}

/*
 * For opts->loaded: the library must be mapped under exactly that path,
 * so that dlopen() finds the loaded copy by its name and maps nothing
 * (glibc compares the names of loaded objects before opening a file; the
 * file itself may be gone).
 */
static int
check_loaded(pid_t pid, const char *lib, char **cause)
{
	bool found;
	int rc;

	if ((rc = maps_library(pid, lib, NULL, &found, cause)) != FP_OK)
		return rc;
	if (!found)
		return fail(cause, FP_ERR, "%s is not loaded in process %d: "
		    "there is no copy to start again", lib, (int)pid);
	return FP_OK;
}

/* The state letter of the whole process, or 0. */
static char
process_state(pid_t pid)
{
	struct proc_thread_stat st;

	return procfs_thread_stat(pid, pid, &st) ? st.state : 0;
}

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static int
inject_search(const struct target *tg, const char *lib, const char *symbol,
    const char *arg, uint64_t search_deadline, uint64_t deadline,
    int timeout_ms, char **cause)
{
	struct verdicts v = { { NULL, 0, 0 }, 0, 0 };
	pid_t *tids = NULL, *order = NULL;
	bool *syscall_ok = NULL;
	unsigned round = 0;
	size_t n = 0, i, k, norder;
	char *whole = NULL;	/* the last round that was not cut short */
	const char *summary;
	int rc = FP_ERR;

	while (now_ns() < search_deadline) {
		if (!procfs_exists(tg->pid))
			return fail(cause, FP_ENOPROC, "process %d has exited",
			    (int)tg->pid);
		free(tids);
		free(order);
		free(syscall_ok);
		tids = NULL;
		if ((rc = procfs_tids(tg->pid, &tids, &n, cause)) != 0)
			goto out;
		v.why.len = 0;	/* the last round says enough */
		if (v.why.s != NULL)
			v.why.s[0] = '\0';
		order = xcalloc(n ? n : 1, sizeof *order);
		syscall_ok = xcalloc(n ? n : 1, sizeof *syscall_ok);
		norder = 0;
		/*
		 * Threads blocked in an allow-listed system call first (read
		 * before stopping anything), then those waiting in a futex
		 * (safe if it is a Python lock's: the stack says), then
		 * running threads, which are safe when interrupted in
		 * Python's own code.
		 */
		/*
		 * Each pass reads the threads' state again, and a thread may
		 * move between them (a read in the first pass, a futex in the
		 * second): it is listed once, as order has room for n threads.
		 */
		for (k = 0; k < 2; k++)
			for (i = 0; i < n; i++) {
				long nr;
				uint64_t a0;

				if (!pid_in(order, norder, tids[i]) &&
				    procfs_thread_syscall(tg->pid, tids[i], &nr,
				    &a0) && (k == 0 ? is_safe_syscall(nr) :
				    nr == SYS_futex && tg->lock_wait.end != 0)) {
					syscall_ok[norder] = true;
					order[norder++] = tids[i];
				}
			}
		for (i = 0; i < n; i++) {
			struct proc_thread_stat st;

			if (!pid_in(order, norder, tids[i]) &&
			    procfs_thread_stat(tg->pid, tids[i], &st) && st.state == 'R')
				order[norder++] = tids[i];
		}
		for (i = 0; i < norder && now_ns() < search_deadline; i++) {
			if (attempt(tg, order[i], syscall_ok[i], lib, symbol, arg,
			    search_deadline, deadline, &v, &rc, cause) ==
			    ATTEMPT_DONE)
				goto out;
		}
		/*
		 * A round the search's end cut into -- maybe in the middle of
		 * a stop, which then "did not stop in time" -- says less than
		 * the whole one before it.
		 */
		if (now_ns() < search_deadline) {
			free(whole);
			whole = v.why.len > 0 ? sbuf_steal(&v.why) : NULL;
		}
		/* Let the threads move on, then look again. */
		sleep_ms(round < 5 ? 1 : round < 50 ? 5 : 20);
		round++;
	}
	summary = whole != NULL ? whole + 2 : v.why.len > 0 ? v.why.s + 2 :
	    "no thread was blocked in a safe system call or running Python code";
	/*
	 * The time really waited since inject_load began, not the timeout:
	 * the search stops early to leave room for the calls.
	 */
	rc = fail(cause, FP_ERR, "no thread of process %d reached a safe point "
	    "in %.1f s (%u tried%s; last: %.300s); nothing was changed.  "
	    "Retry when the program is idle or sleeping, or use the outside "
	    "view", (int)tg->pid, (double)(now_ns() - (deadline -
	    (uint64_t)timeout_ms * 1000000u)) / 1e9, v.tried, v.loader_busy ?
	    ", the loader was busy" : "", summary);
out:
	sbuf_free(&v.why);
	free(whole);
	free(tids);
	free(order);
	free(syscall_ok);
	return rc;
}

int
inject_load(pid_t pid, const char *lib_path, const char *symbol,
    const char *arg, const struct inject_opts *opts, char **cause)
{
	int timeout_ms = opts != NULL && opts->timeout_ms > 0 ?
	    opts->timeout_ms : DEFAULT_TIMEOUT_MS;
	uint64_t start = now_ns(), deadline, search_deadline;
	sigset_t block, old;
	struct target tg;
	pid_t tracer;
	char state;
	int rc;

	deadline = start + (uint64_t)timeout_ms * 1000000u;
	/* Leave a quarter of the time (at most 2 s) for the calls. */
	search_deadline = deadline - (uint64_t)(timeout_ms / 4 < 2000 ?
	    timeout_ms / 4 : 2000) * 1000000u;

	if (pid <= 0 || pid == getpid())
		return fail(cause, FP_EUSAGE, "invalid process id %d", (int)pid);
	if (lib_path == NULL || lib_path[0] != '/' ||
	    strlen(lib_path) >= STRINGS_SIZE / 2)
		return fail(cause, FP_EUSAGE, "the library to inject must be "
		    "given by an absolute path");
	if (symbol == NULL || symbol[0] == '\0' ||
	    strlen(symbol) + 1 + (arg ? strlen(arg) + 1 : 0) + strlen(lib_path)
	    + 1 > STRINGS_SIZE)
		return fail(cause, FP_EUSAGE, "a bootstrap symbol is needed (and "
		    "the strings must fit in %d bytes)", STRINGS_SIZE);

	if (!procfs_exists(pid))
		return fail(cause, FP_ENOPROC, "no process %d", (int)pid);
	state = process_state(pid);
	if (state == 'T')
		return fail(cause, FP_ERR, "process %d is stopped (state T: "
		    "SIGSTOP or job control) and was left as it was; resume it "
		    "with `kill -CONT %d` and try again", (int)pid, (int)pid);
	if (state == 'Z' || state == 'X')
		return fail(cause, FP_ENOPROC, "process %d has exited", (int)pid);
	if ((tracer = procfs_tracer(pid)) > 0)
		return fail(cause, FP_EPERM, "process %d is traced by process %d "
		    "(a debugger or another profiler); detach it first",
		    (int)pid, (int)tracer);
	rc = opts != NULL && opts->loaded ? check_loaded(pid, lib_path, cause) :
	    check_not_loaded(pid, lib_path, cause);
	if (rc != 0)
		return rc;
	if ((rc = target_open(pid, &tg, cause)) != 0)
		return rc;

	/*
	 * Ctrl-C, SIGTERM or a terminal stop now would leave the thread
	 * hijacked: hold them until the target is whole again (every wait
	 * below is bounded by the timeout).
	 */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigaddset(&block, SIGTSTP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rc = inject_search(&tg, lib_path, symbol, arg, search_deadline, deadline,
	    timeout_ms, cause);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	target_free(&tg);
	return rc;
}

void
inject_release_all(void)
{
	tstop_release_all();	/* calls ptrace.c's rescue first */
}
