#include "config.h"

#include "core/procfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

static int
open_error(pid_t pid, const char *what, char **cause)
{
	int e = errno;

	if (e == ENOENT || e == ESRCH || !procfs_exists(pid))
		return fail(cause, FP_ENOPROC, "no process with pid %d", (int)pid);
	if (e == EACCES || e == EPERM) {
		char *why = procfs_explain_eperm(pid);
		int rc = fail(cause, FP_EPERM,
		    "cannot read process %d: permission denied (%s)", (int)pid, why);
		free(why);
		return rc;
	}
	return fail(cause, FP_ERR, "cannot read %s of process %d: %s", what,
	    (int)pid, strerror(e));
}

int
procfs_maps_read(pid_t pid, struct proc_maps *maps, char **cause)
{
	char path[64], *text, *line, *next;

	memset(maps, 0, sizeof *maps);
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	text = read_file_str(path, NULL);
	if (text == NULL)
		return open_error(pid, "the memory map", cause);
	if (*text == '\0') {
		struct proc_thread_stat st;

		free(text);
		/* Zombies and kernel threads have no mappings. */
		if (!procfs_thread_stat(pid, pid, &st) || st.state == 'Z' || st.state == 'X')
			return fail(cause, FP_EEXITED, "process %d exited", (int)pid);
		return fail(cause, FP_ENOTPY, "process %d is a kernel thread (no memory map), not a "
		    "Python process", (int)pid);
	}
	for (line = text; line != NULL && *line != '\0'; line = next) {
		struct proc_map *m;
		unsigned long long start, end, offset;
		char perms[5];
		int used = 0;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (sscanf(line, "%llx-%llx %4s %llx %*s %*s%n", &start, &end,
		    perms, &offset, &used) < 4)
			continue;
		m = ARRAY_PUSH(maps->maps, maps->n, maps->alloc);
		m->start = start;
		m->end = end;
		m->offset = offset;
		memcpy(m->perms, perms, sizeof m->perms);
		line += used;
		while (*line == ' ')
			line++;
		m->path = *line != '\0' ? xstrdup(line) : NULL;
	}
	free(text);
	return FP_OK;
}

void
procfs_maps_free(struct proc_maps *maps)
{
	size_t i;

	for (i = 0; i < maps->n; i++)
		free(maps->maps[i].path);
	free(maps->maps);
	memset(maps, 0, sizeof *maps);
}

const struct proc_map *
procfs_maps_find(const struct proc_maps *maps, uint64_t addr)
{
	size_t lo = 0, hi = maps->n;

	/* /proc/pid/maps is sorted by address. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct proc_map *m = &maps->maps[mid];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

static int
cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int
procfs_tids(pid_t pid, pid_t **tids, size_t *n, char **cause)
{
	char path[64];
	struct dirent *de;
	size_t alloc = 0;
	DIR *d;

	*tids = NULL;
	*n = 0;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d == NULL)
		return open_error(pid, "the thread list", cause);
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		*ARRAY_PUSH(*tids, *n, alloc) = (pid_t)atoi(de->d_name);
	}
	closedir(d);
	if (*n == 0)
		return fail(cause, FP_EEXITED, "process %d has no threads left", (int)pid);
	procfs_sort_pids(*tids, *n);
	return FP_OK;
}

void
procfs_sort_pids(pid_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_pid);
}

bool
procfs_thread_stat(pid_t pid, pid_t tid, struct proc_thread_stat *st)
{
	char path[80], buf[1024], *p;
	unsigned long long utime, stime;
	unsigned flags;
	ssize_t len;
	FILE *f;

	memset(st, 0, sizeof *st);
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	len = (ssize_t)fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	/* The command name may contain spaces and parentheses: skip to the last ')'. */
	p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ')
		return false;
	{
		const char *open = strchr(buf, '(');
		size_t n = open != NULL && open < p ? (size_t)(p - open - 1) : 0;

		if (n >= sizeof st->comm)
			n = sizeof st->comm - 1;
		memcpy(st->comm, open != NULL ? open + 1 : "", n);
		st->comm[n] = '\0';
	}
	st->state = p[2];
	/* fields after state: ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (sscanf(p + 3, "%*d %*d %*d %*d %*d %u %*u %*u %*u %*u %llu %llu",
	    &flags, &utime, &stime) == 3) {
		st->exiting = (flags & 0x4) != 0;	/* PF_EXITING */
		st->utime = utime;
		st->stime = stime;
	}
	return true;
}

char *
procfs_thread_comm(pid_t pid, pid_t tid)
{
	char path[80], *s;
	size_t len;

	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	s = read_file_str(path, &len);
	if (s == NULL)
		return NULL;
	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		s[--len] = '\0';
	return s;
}

/* "NR 0xARG0 ..." of a syscall file; "running" and "-1 ..." are not. */
static bool
parse_syscall(char *buf, ssize_t len, long *nr, uint64_t *arg0)
{
	unsigned long long a0;
	long n;

	if (len <= 0)
		return false;
	buf[len] = '\0';
	if (sscanf(buf, "%ld 0x%llx", &n, &a0) != 2)
		return false;	/* "running" or "-1 ..." */
	*nr = n;
	*arg0 = a0;
	return true;
}

bool
procfs_thread_syscall(pid_t pid, pid_t tid, long *nr, uint64_t *arg0)
{
	char path[80], buf[256];
	ssize_t len;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	len = (ssize_t)fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	return parse_syscall(buf, len, nr, arg0);
}

bool
procfs_syscall_fd(int fd, long *nr, uint64_t *arg0)
{
	char buf[256];

	return parse_syscall(buf, pread(fd, buf, sizeof buf - 1, 0), nr, arg0);
}

char *
procfs_cmdline(pid_t pid)
{
	char path[64], *s;
	size_t len, i;

	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	s = read_file_str(path, &len);
	if (s == NULL)
		return NULL;
	while (len > 0 && s[len - 1] == '\0')
		len--;
	/* Arguments are separated by NULs; a `python -c` script has newlines. */
	for (i = 0; i < len; i++)
		if (s[i] == '\0' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')
			s[i] = ' ';
	s[len] = '\0';
	return s;
}

static long long
status_field(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

bool
procfs_thread_sigsets(pid_t pid, pid_t tid, struct proc_sigsets *s)
{
	static const struct {
		const char *key;
		size_t off;
	} fields[] = {
		{ "SigPnd:", offsetof(struct proc_sigsets, pending) },
		{ "ShdPnd:", offsetof(struct proc_sigsets, shared_pending) },
		{ "SigBlk:", offsetof(struct proc_sigsets, blocked) },
		{ "SigCgt:", offsetof(struct proc_sigsets, caught) },
	};
	char path[64], line[256];
	unsigned seen = 0;
	size_t i;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid,
	    (int)tid);
	if ((f = fopen(path, "re")) == NULL)
		return false;
	while (fgets(line, sizeof line, f) != NULL)
		for (i = 0; i < FP_NELEM(fields); i++)
			if (strncmp(line, fields[i].key, 7) == 0) {
				*(uint64_t *)((char *)s + fields[i].off) =
				    strtoull(line + 7, NULL, 16);
				seen |= 1u << i;
			}
	fclose(f);
	return seen == (1u << FP_NELEM(fields)) - 1;
}

pid_t
procfs_tracer(pid_t pid)
{
	return (pid_t)status_field(pid, "TracerPid");
}

uid_t
procfs_uid(pid_t pid)
{
	long long v = status_field(pid, "Uid");

	return v < 0 ? (uid_t)-1 : (uid_t)v;
}

bool
procfs_exists(pid_t pid)
{
	struct proc_thread_stat st;

	if (pid <= 0)
		return false;
	if (kill(pid, 0) != 0 && errno != EPERM)
		return false;
	/* A zombie has exited: nothing of it can be read any more. */
	if (procfs_thread_stat(pid, pid, &st) && (st.state == 'Z' || st.state == 'X'))
		return false;
	return true;
}

/* A capability set ("CapEff:", "CapPrm:") of /proc/<pid>/status; 0 if unreadable. */
static uint64_t
status_caps(const char *path, const char *field)
{
	char line[256];
	uint64_t caps = 0;
	size_t len = strlen(field);
	FILE *f;

	f = fopen(path, "re");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, field, len) == 0) {
			caps = strtoull(line + len, NULL, 16);
			break;
		}
	}
	fclose(f);
	return caps;
}

/* Effective capability set of this process has CAP_SYS_PTRACE (19)? */
static bool
have_cap_sys_ptrace(void)
{
	return (status_caps("/proc/self/status", "CapEff:") >> 19) & 1;
}

/*
 * "cap_sys_resource, ..." for the capabilities process pid may use and this
 * one may not, or NULL.  The kernel lets a process read another of the
 * same uid only when it holds every capability of the other, or
 * CAP_SYS_PTRACE (cap_ptrace_access_check).
 */
static char *
caps_we_lack(pid_t pid)
{
	static const char *const names[] = {
		"chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill", "setgid",
		"setuid", "setpcap", "linux_immutable", "net_bind_service", "net_broadcast",
		"net_admin", "net_raw", "ipc_lock", "ipc_owner", "sys_module", "sys_rawio",
		"sys_chroot", "sys_ptrace", "sys_pacct", "sys_admin", "sys_boot", "sys_nice",
		"sys_resource", "sys_time", "sys_tty_config", "mknod", "lease", "audit_write",
		"audit_control", "setfcap", "mac_override", "mac_admin", "syslog", "wake_alarm",
		"block_suspend", "audit_read", "perfmon", "bpf", "checkpoint_restore",
	};
	char path[64];
	struct sbuf b = { 0 };
	uint64_t lack;
	unsigned i;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	lack = status_caps(path, "CapPrm:") & ~status_caps("/proc/self/status", "CapPrm:");
	for (i = 0; i < 64; i++) {
		if (!((lack >> i) & 1))
			continue;
		if (i < FP_NELEM(names))
			sbuf_addf(&b, "%scap_%s", b.len ? ", " : "", names[i]);
		else
			sbuf_addf(&b, "%scapability %u", b.len ? ", " : "", i);
	}
	return b.len ? sbuf_steal(&b) : NULL;
}

/*
 * Why a process of our own uid is refused: it holds capabilities we lack,
 * or is not dumpable; with CAP_SYS_PTRACE neither stops the kernel, and
 * what is left is a sandbox or security module around us.
 */
static void
explain_same_uid(struct sbuf *b, pid_t pid, uid_t target)
{
	char path[64], *lack = caps_we_lack(pid);
	bool ptrace_cap = have_cap_sys_ptrace();
	struct stat st;

	bool reason = true;

	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	if (lack != NULL) {
		sbuf_addf(b, "process %d runs as uid %u like you but holds capabilities you lack (%s)",
		    (int)pid, (unsigned)target, lack);
	} else if (stat(path, &st) == 0 && st.st_uid != target) {
		sbuf_addf(b, "process %d is not dumpable (it changed credentials or called "
		    "prctl(PR_SET_DUMPABLE, 0))", (int)pid);
	} else {
		sbuf_addf(b, "process %d runs as uid %u like you", (int)pid, (unsigned)target);
		reason = false;
	}
	if (ptrace_cap)
		sbuf_add(b, ", and the kernel refused even with CAP_SYS_PTRACE: flight_profiler runs "
		    "in a sandbox or under a security module (Landlock, a container runtime's "
		    "policy) that keeps it from processes outside");
	else if (reason)
		sbuf_add(b, ": reading it needs CAP_SYS_PTRACE");
	free(lack);
}

bool
procfs_readable(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno != EACCES && errno != EPERM;
	close(fd);
	return true;
}

/*
 * One wording whatever step failed: a process that exits under us can
 * break any read, injection or connection, and each would otherwise blame
 * something else (a replaced library, a missing process, a handshake).
 */
int
procfs_explain_failure(pid_t pid, bool existed, int rc, char **cause)
{
	struct timespec ten_ms = { 0, 10 * 1000 * 1000 };
	struct proc_thread_stat st;
	int i;

	if (rc == FP_OK || rc == FP_EUSAGE || pid <= 0)
		return rc;
	/* Refused a socket or a file of a process we may not read at all: say why. */
	if (rc == FP_EPERM && !procfs_readable(pid)) {
		char *why = procfs_explain_eperm(pid);

		rc = fail(cause, FP_EPERM, "cannot read process %d: permission denied (%s)", (int)pid,
		    why);
		free(why);
		return rc;
	}
	/*
	 * An exit under way shows a moment later than the failure it caused
	 * (a thread we held was killed by the exit_group: ESRCH): look again
	 * for a few milliseconds before blaming anything else.
	 */
	for (i = 0; i < 5; i++) {
		if (!procfs_thread_stat(pid, pid, &st))
			return existed ? fail(cause, FP_EEXITED, "process %d exited", (int)pid) : rc;
		if (st.state == 'Z' || st.state == 'X' || st.exiting)
			return fail(cause, FP_EEXITED, "process %d exited", (int)pid);
		nanosleep(&ten_ms, NULL);
	}
	if (st.state == 'T')
		return fail(cause, rc, "process %d is stopped (state T): resume it with kill -CONT %d",
		    (int)pid, (int)pid);
	return rc;
}

char *
procfs_explain_eperm(pid_t pid)
{
	uid_t target = procfs_uid(pid), me = geteuid();
	struct sbuf b = { 0 };
	char *scope;

	if (target != (uid_t)-1 && target != me)
		sbuf_addf(&b, "process %d runs as uid %u and you are uid %u; "
		    "reading another user's process needs root or CAP_SYS_PTRACE",
		    (int)pid, (unsigned)target, (unsigned)me);
	else if (target != (uid_t)-1)
		explain_same_uid(&b, pid, target);
	else if (!have_cap_sys_ptrace() && me != 0)
		sbuf_addf(&b, "you are uid %u without CAP_SYS_PTRACE", (unsigned)me);
	else
		sbuf_addf(&b, "uid %u", (unsigned)me);
	scope = read_file_str("/proc/sys/kernel/yama/ptrace_scope", NULL);
	if (scope != NULL) {
		int level = atoi(scope);

		if (level == 1)
			sbuf_add(&b, "; Yama ptrace_scope is 1: only a parent may trace, "
			    "run as root or `sysctl kernel.yama.ptrace_scope=0`");
		else if (level >= 2)
			sbuf_addf(&b, "; Yama ptrace_scope is %d: only CAP_SYS_PTRACE "
			    "(or nobody, at 3) may trace", level);
		free(scope);
	}
	if (!have_cap_sys_ptrace())
		sbuf_add(&b, "; in a container, add CAP_SYS_PTRACE (docker run --cap-add SYS_PTRACE)");
	return sbuf_steal(&b);
}

char *
procfs_target_path(pid_t pid, const char *path)
{
	return xasprintf("/proc/%d/root%s%s", (int)pid, path[0] == '/' ? "" : "/", path);
}

/*
 * How long the thread has run on a CPU, in ns (/proc/PID/task/TID/schedstat),
 * 0 if unknown.
 */
uint64_t
procfs_thread_ran_ns(pid_t pid, pid_t tid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	if (tid <= 0)
		return 0;
	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}
