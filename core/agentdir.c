#include "config.h"

#include "core/agentdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#include "core/procfs.h"
#include "core/util.h"

#define SOCK_NAME "agent.sock"
#define REPORT_MAX 65536	/* bytes of a report file worth showing */

/* Root and the target's uid are the only owners trusted with the agent's files. */
static bool
trusted(uid_t owner, uid_t uid)
{
	return owner == 0 || owner == uid;
}

static const char *
kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISLNK(mode))
		return "a symlink";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISREG(mode))
		return "a regular file";
	return "a special file";
}

static const char impostor_hint[] = "another user may be impersonating the agent; "
    "remove it (as root) and retry";

/*
 * The one-line refusal: what was found where we looked, what was expected,
 * and what to do.  Always FP_EPERM, so that no caller falls through to
 * loading the agent over it.
 */
static int
refuse(char **cause, pid_t pid, const char *what, const struct stat *st, const char *expected,
    uid_t uid, const char *hint)
{
	char owners[40], mode[16] = "";

	if (uid == 0)
		snprintf(owners, sizeof owners, "root");
	else
		snprintf(owners, sizeof owners, "uid %u or root", (unsigned)uid);
	if (!S_ISLNK(st->st_mode))	/* a symlink's mode means nothing */
		snprintf(mode, sizeof mode, ", mode %04o", (unsigned)(st->st_mode & 07777));
	return fail(cause, FP_EPERM, "refusing %s of process %d: %s of uid %u%s (expected %s of "
	    "%s): %s", what, (int)pid, kind(st->st_mode), (unsigned)st->st_uid, mode, expected,
	    owners, hint);
}

/*
 * `name` under rfd as the target resolves it: a symlinked /tmp of a
 * container leads where it leads inside the container, not on the host.
 * Without openat2 (Linux < 5.6, or a seccomp filter), symlinks are refused.
 */
static int
open_in_root(int rfd, const char *name)
{
#ifdef SYS_openat2
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, rfd, name, &how, sizeof how);

	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return fd;
#endif
	return openat(rfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static int
cannot_reach(pid_t pid, int e, char **cause)
{
	char *why;
	int rc;

	if (!procfs_exists(pid))
		return fail(cause, FP_ENOPROC, "no process with pid %d", (int)pid);
	if (e != EACCES && e != EPERM)
		return fail(cause, FP_ERR, "cannot reach the files of process %d: %s", (int)pid,
		    strerror(e));
	why = procfs_explain_eperm(pid);
	rc = fail(cause, FP_EPERM, "cannot reach the files of process %d: permission denied (%s)",
	    (int)pid, why);
	free(why);
	return rc;
}

int
agentdir_open_tmp(pid_t pid, int *tfd, uid_t *uidp, char **cause)
{
	char root[48];
	struct stat rst, st;
	uid_t uid = procfs_uid(pid);
	int rfd, fd, e;

	*tfd = -1;
	snprintf(root, sizeof root, "/proc/%d/root", (int)pid);
	if (uid == (uid_t)-1)
		return cannot_reach(pid, ESRCH, cause);
	if ((rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return cannot_reach(pid, errno, cause);
	if (fstat(rfd, &rst) != 0) {
		e = errno;
		close(rfd);
		return cannot_reach(pid, e, cause);
	}
	fd = open_in_root(rfd, "tmp");
	e = errno;
	close(rfd);
	if (fd < 0)
		return fail(cause, FP_ERR, "process %d has no usable /tmp (%s)", (int)pid, strerror(e));
	if (fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		return fail(cause, FP_ERR, "cannot look at /tmp of process %d: %s", (int)pid, strerror(e));
	}
	/*
	 * Its owner is trusted like the target's root directory (a container's
	 * root may be a mapped uid); whoever may write it must not be able to
	 * rename what others put there.
	 */
	if (!S_ISDIR(st.st_mode) || !(trusted(st.st_uid, uid) || st.st_uid == rst.st_uid) ||
	    ((st.st_mode & 022) != 0 && (st.st_mode & S_ISVTX) == 0)) {
		close(fd);
		return refuse(cause, pid, "/tmp", &st, (st.st_mode & 022) != 0 ? "a sticky directory" :
		    "a directory", uid, "others could rename the agent's files there; make it "
		    "sticky (chmod +t) and retry");
	}
	*tfd = fd;
	*uidp = uid;
	return FP_OK;
}

int
agentdir_open(pid_t pid, int tfd, uid_t uid, int flags, int *dfd, char **cause)
{
	char name[48], what[64];
	struct stat st;
	int e;

	snprintf(name, sizeof name, ".flight_profiler-%d", (int)pid);
	snprintf(what, sizeof what, "/tmp/%s", name);
	*dfd = openat(tfd, name, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | flags);
	if (*dfd >= 0)
		return FP_OK;
	e = errno;
	if (e == ENOENT)
		return FP_OK;
	if (fstatat(tfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
		return refuse(cause, pid, what, &st, "a 0700 directory", uid, impostor_hint);
	return fail(cause, e == EACCES ? FP_EPERM : FP_ERR, "cannot open %s of process %d: %s", what,
	    (int)pid, strerror(e));
}

int
agentdir_check(pid_t pid, int dfd, uid_t uid, char **cause)
{
	char what[64];
	struct stat st;

	snprintf(what, sizeof what, "/tmp/.flight_profiler-%d", (int)pid);
	if (fstat(dfd, &st) != 0)
		return fail(cause, FP_ERR, "cannot look at %s of process %d: %s", what, (int)pid,
		    strerror(errno));
	if (!S_ISDIR(st.st_mode) || !trusted(st.st_uid, uid) || (st.st_mode & 07777) != 0700)
		return refuse(cause, pid, what, &st, "a 0700 directory", uid, impostor_hint);
	return FP_OK;
}

/* The checked agent directory of pid, O_PATH; FP_OK with *dfd = -1 when absent. */
static int
checked_dir(pid_t pid, int *dfd, uid_t *uid, char **cause)
{
	int tfd, rc;

	*dfd = -1;
	if ((rc = agentdir_open_tmp(pid, &tfd, uid, cause)) != FP_OK)
		return rc;
	rc = agentdir_open(pid, tfd, *uid, O_PATH, dfd, cause);
	close(tfd);
	if (rc == FP_OK && *dfd >= 0 && (rc = agentdir_check(pid, *dfd, *uid, cause)) != FP_OK) {
		close(*dfd);
		*dfd = -1;
	}
	return rc;
}

/*
 * The listener must be the target itself: the kernel gives its pid as
 * this process's pid namespace sees it (0 when it cannot see it), which is
 * how we name the target.
 */
static int
check_peer(pid_t pid, int fd, uid_t uid, char **cause)
{
	struct ucred cred;
	socklen_t len = sizeof cred;
	char who[64];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return fail(cause, FP_ERR, "cannot read who serves the agent socket of process %d: %s",
		    (int)pid, strerror(errno));
	if (cred.pid == pid && trusted(cred.uid, uid))
		return FP_OK;
	if (cred.pid == 0)
		snprintf(who, sizeof who, "a process outside this pid namespace");
	else
		snprintf(who, sizeof who, "process %d", (int)cred.pid);
	return fail(cause, FP_EPERM, "refusing /tmp/.flight_profiler-%d/%s of process %d: it is "
	    "served by %s of uid %u, not by process %d: %s", (int)pid, SOCK_NAME, (int)pid, who,
	    (unsigned)cred.uid, (int)pid, impostor_hint);
}

/* Connect to agent.sock of the checked directory dfd, through dfd itself. */
static int
connect_socket(pid_t pid, int dfd, uid_t uid, int *fdp, bool *nobody, char **cause)
{
	char what[80];
	struct sockaddr_un sa;
	struct stat st;
	int fd, e;

	snprintf(what, sizeof what, "/tmp/.flight_profiler-%d/%s", (int)pid, SOCK_NAME);
	if (fstatat(dfd, SOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(st.st_mode)) {
		/* Only its owner or root could put it there: stale, not hostile. */
		*nobody = true;
		return fail(cause, FP_ERR, "no agent listens on %s of process %d", what, (int)pid);
	}
	if (!trusted(st.st_uid, uid))
		return refuse(cause, pid, what, &st, "a socket", uid, impostor_hint);
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s", dfd, SOCK_NAME);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return fail(cause, FP_ERR, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		e = errno;
		close(fd);
		*nobody = e == ECONNREFUSED || e == ENOENT;
		if (e == EACCES || e == EPERM)
			return fail(cause, FP_EPERM, "cannot connect to the agent of process %d: permission "
			    "denied (only the process's owner and root may)", (int)pid);
		return fail(cause, FP_ERR, "cannot connect to the agent of process %d on %s: %s",
		    (int)pid, what, strerror(e));
	}
	if ((e = check_peer(pid, fd, uid, cause)) != FP_OK) {
		close(fd);
		return e;
	}
	*fdp = fd;
	return FP_OK;
}

int
agentdir_connect(pid_t pid, int *fdp, bool *nobody, char **cause)
{
	bool none = false;
	uid_t uid;
	int dfd, rc;

	*fdp = -1;
	rc = checked_dir(pid, &dfd, &uid, cause);
	if (rc == FP_OK && dfd < 0) {
		none = true;
		rc = fail(cause, FP_ERR, "no flight_profiler agent runs in process %d", (int)pid);
	} else if (rc == FP_OK) {
		rc = connect_socket(pid, dfd, uid, fdp, &none, cause);
		close(dfd);
	}
	if (nobody != NULL)
		*nobody = none;
	return rc;
}

char *
agentdir_read(pid_t pid, const char *name)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	ssize_t n;
	uid_t uid;
	int dfd, fd;

	if (checked_dir(pid, &dfd, &uid, NULL) != FP_OK || dfd < 0)
		return NULL;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && trusted(st.st_uid, uid)) {
		text = xmalloc(REPORT_MAX + 1);
		while (len < REPORT_MAX && (n = read(fd, text + len, REPORT_MAX - len)) > 0)
			len += (size_t)n;
		while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
			len--;
		text[len] = '\0';
	}
	close(fd);
	return text;
}
