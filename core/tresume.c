#include "config.h"

#include "core/tresume.h"

#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/util.h"

#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441
#endif

/* include/linux/errno.h: never seen by user space, only by the kernel. */
#define ERESTARTNOHAND 514

/*
 * The waits that return -EINTR when a stop breaks them off, where other
 * calls return a restart code (signal(7), "Interruption of system calls
 * and library functions by stop signals").  Only those whose restart is
 * the same call again with the same arguments: a relative timeout restarts
 * in full (see tresume_fix_regs()).
 */
static const long eintr_waits[] = {
	SYS_epoll_wait, SYS_epoll_pwait, SYS_epoll_pwait2,
};

bool
tresume_fix_regs(pid_t pid, struct user_regs_struct *r)
{
	unsigned char insn[2];
	struct iovec local = { insn, sizeof insn };
	struct iovec remote;
	size_t i;

	if ((int64_t)r->rax != -EINTR)
		return false;
	for (i = 0; i < FP_NELEM(eintr_waits); i++)
		if ((int64_t)r->orig_rax == eintr_waits[i])
			break;
	if (i == FP_NELEM(eintr_waits))
		return false;
	/*
	 * orig_rax is a system call number only on the way out of a system
	 * call (an exception's error code sits there otherwise): make sure
	 * the pc follows a `syscall` instruction.
	 */
	remote.iov_base = (void *)(uintptr_t)(r->rip - 2);
	remote.iov_len = sizeof insn;
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != sizeof insn ||
	    insn[0] != 0x0f || insn[1] != 0x05)
		return false;
	/*
	 * -ERESTARTNOHAND is what select and poll return in the same place.
	 * Our stop happens inside get_signal(), before the kernel decides
	 * about restarts (arch_do_signal_or_restart()): if a signal with a
	 * handler is delivered after we let go, handle_signal() turns the
	 * code into -EINTR, which is what epoll would have returned for that
	 * signal without us; if none is, rax becomes orig_rax again and the
	 * pc goes back over the `syscall`, so the wait is issued afresh.  The
	 * signal mask of epoll_pwait stays right: on -EINTR its saved mask is
	 * kept until after signal delivery, and the restarted call sets the
	 * temporary one again.
	 *
	 * The timeout starts over: the kernel keeps no end time for epoll as
	 * it does for poll (restart_block), and shortening it would mean
	 * changing rdx, which the kernel ABI preserves and the caller's code
	 * may still use, or the caller's timespec of epoll_pwait2.  So a wait
	 * may last up to the time it had already waited longer; it never ends
	 * early and never fails because of us.
	 */
	r->rax = (uint64_t)-ERESTARTNOHAND;
	return true;
}

void
tresume_fix_syscall(pid_t pid, pid_t tid)
{
	struct user_regs_struct r;
	int saved = errno;

	if (ptrace(PTRACE_GETREGS, tid, NULL, &r) == 0 &&
	    tresume_fix_regs(pid, &r))
		(void)ptrace(PTRACE_SETREGS, tid, NULL, &r);
	errno = saved;
}

void
tresume_note_held(const char *holder, pid_t tid, uint64_t stopped_ns,
    uint64_t longest_stop_ns)
{
	const char *path = getenv("FP_STOP_STATS");
	uint64_t held = now_ns() - stopped_ns;
	char line[96];
	int fd, n;

	if (path == NULL || path[0] == '\0' || stopped_ns == 0)
		return;
	n = snprintf(line, sizeof line, "%s %d %llu %llu\n", holder, (int)tid,
	    (unsigned long long)held, (unsigned long long)(longest_stop_ns != 0 ?
	    longest_stop_ns : held));
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0644)) == -1)
		return;
	if (write(fd, line, (size_t)n) != n)
		(void)0;	/* a measurement: nothing to do about it */
	close(fd);
}
