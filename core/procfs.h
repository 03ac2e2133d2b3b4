/*
 * procfs — what /proc says about a process: its mappings, its threads and
 * their states, its command line, who traces it.
 *
 * Reading /proc never stops or changes the target.  Thread states must be
 * read before anything is stopped, or every thread looks stopped.
 */
#ifndef FP_PROCFS_H
#define FP_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_map {
	uint64_t start, end, offset;
	char perms[5];		/* "r-xp" */
	char *path;		/* NULL for anonymous mappings */
};

struct proc_maps {
	struct proc_map *maps;
	size_t n, alloc;
};

/* Returns an enum fp_status: FP_ENOPROC, FP_EPERM or FP_ERR on failure. */
int procfs_maps_read(pid_t pid, struct proc_maps *maps, char **cause);
void procfs_maps_free(struct proc_maps *maps);
/* The mapping holding addr, or NULL. */
const struct proc_map *procfs_maps_find(const struct proc_maps *maps, uint64_t addr);

/* Thread ids of a process, sorted; *tids is malloc'd. */
int procfs_tids(pid_t pid, pid_t **tids, size_t *n, char **cause);
/* Ascending, as every list of pids or tids we show. */
void procfs_sort_pids(pid_t *v, size_t n);

struct proc_thread_stat {
	char state;		/* R, S, D, T, t, Z, ... ; 0 when unknown */
	uint64_t utime, stime;	/* clock ticks */
	bool exiting;		/* in exit(): its memory may be gone already */
	char comm[64];		/* the thread's name, as /proc/.../comm has it */
};
bool procfs_thread_stat(pid_t pid, pid_t tid, struct proc_thread_stat *st);

/*
 * A thread's signal sets from /proc/<pid>/task/<tid>/status, bit n - 1 for
 * signal n: pending for the thread (SigPnd) or the process (ShdPnd),
 * blocked (SigBlk) and caught by a handler (SigCgt).  False if unreadable.
 */
struct proc_sigsets {
	uint64_t pending, shared_pending, blocked, caught;
};
bool procfs_thread_sigsets(pid_t pid, pid_t tid, struct proc_sigsets *s);

/* /proc/<pid>/task/<tid>/comm without the newline; NULL if gone. */
char *procfs_thread_comm(pid_t pid, pid_t tid);

/*
 * The system call a blocked thread is in (/proc/.../syscall): *nr and its
 * first argument.  False when the thread is running or this is unreadable.
 */
bool procfs_thread_syscall(pid_t pid, pid_t tid, long *nr, uint64_t *arg0);
/* The same from that file kept open (one pread a look). */
bool procfs_syscall_fd(int fd, long *nr, uint64_t *arg0);

/* The command line on one line (NULs and line breaks become spaces); NULL if unreadable. */
char *procfs_cmdline(pid_t pid);

/* TracerPid from /proc/<pid>/status; -1 if unreadable. */
pid_t procfs_tracer(pid_t pid);
/* Uid (real) of the process; (uid_t)-1 if unreadable. */
uid_t procfs_uid(pid_t pid);

/* True if the process exists and has not exited (zombies have). */
bool procfs_exists(pid_t pid);

/*
 * The status and message of a command's failure `rc` as the target's state
 * explains it (FP_OK and FP_EUSAGE pass through): gone since the command
 * began (`existed`), a zombie or in exit() is "process N exited"
 * (FP_EEXITED); stopped says how to resume it; a permission error on a
 * process this one may not read at all says why (procfs_explain_eperm).
 */
int procfs_explain_failure(pid_t pid, bool existed, int rc, char **cause);

/* May this process read pid's memory map (ptrace read access)? */
bool procfs_readable(pid_t pid);

/*
 * A sentence saying why this user may not read/trace `pid`: uid mismatch,
 * missing CAP_SYS_PTRACE, Yama ptrace_scope.  Malloc'd.
 */
char *procfs_explain_eperm(pid_t pid);

/* "/proc/<pid>/root" + path: how to open a file of the target (containers). */
char *procfs_target_path(pid_t pid, const char *path);

/*
 * How long thread `tid` of `pid` has run on a CPU, in ns
 * (/proc/PID/task/TID/schedstat); 0 if unknown.
 */
uint64_t procfs_thread_ran_ns(pid_t pid, pid_t tid);

#endif
