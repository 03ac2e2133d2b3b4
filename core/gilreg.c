#include "config.h"

#include "core/gilreg.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

struct gilreg {
	int dfd, fd;
	char name[32];
};

/*
 * Our directory, made if asked and absent, opened without following a
 * link and trusted only if it is ours and nobody else's to write: anyone
 * can make a name in /tmp, and a file planted there would send our
 * SIGTERM wherever it says.  -1 with *cause, or -1 and no cause when it
 * does not exist and was not to be made.
 */
static int
open_dir(bool create, char **cause)
{
	char path[64];
	struct stat st = { 0 };
	int dfd;

	snprintf(path, sizeof path, "/tmp/.flight_profiler-gilstat-%u", (unsigned)geteuid());
	if (create && mkdir(path, 0700) != 0 && errno != EEXIST) {
		fail(cause, FP_ERR, "cannot make %s: %s", path, strerror(errno));
		return -1;
	}
	if ((dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		if (errno != ENOENT || create)
			fail(cause, FP_ERR, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(dfd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		fail(cause, FP_ERR, "%s is not a private directory of ours (owner %u, mode %03o): "
		    "remove it", path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		close(dfd);
		return -1;
	}
	return dfd;
}

/* The pid written in a registration, 0 if none is readable. */
static pid_t
read_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (pid_t)strtol(buf, NULL, 10);
}

int
gilreg_claim(pid_t target, struct gilreg **gp, pid_t *other, char **cause)
{
	struct gilreg *g = xcalloc(1, sizeof *g);
	struct stat a, b;
	int tries;

	*gp = NULL;
	*other = 0;
	snprintf(g->name, sizeof g->name, "%d", (int)target);
	if ((g->dfd = open_dir(true, cause)) < 0) {
		free(g);
		return FP_ERR;
	}
	for (tries = 0; tries < 3; tries++) {
		g->fd = openat(g->dfd, g->name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (g->fd < 0)
			break;
		if (flock(g->fd, LOCK_EX | LOCK_NB) != 0) {
			*other = read_pid(g->fd);
			close(g->fd);
			close(g->dfd);
			free(g);
			return fail(cause, FP_ERR, "gilstat is already on for process %d, in process %d: "
			    "`gilstat off` ends it", (int)target, (int)*other);
		}
		/* Locked the file a run that just ended had unlinked: take a new one. */
		if (fstat(g->fd, &a) == 0 && fstatat(g->dfd, g->name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			break;
		close(g->fd);
		g->fd = -1;
	}
	if (g->fd < 0) {
		close(g->dfd);
		free(g);
		return fail(cause, FP_ERR, "cannot register gilstat for process %d: %s", (int)target,
		    strerror(errno));
	}
	if (ftruncate(g->fd, 0) != 0 || dprintf(g->fd, "%d\n", (int)getpid()) < 0) {
		gilreg_release(g);
		return fail(cause, FP_ERR, "cannot register gilstat for process %d: %s", (int)target,
		    strerror(errno));
	}
	*gp = g;
	return FP_OK;
}

void
gilreg_release(struct gilreg *g)
{
	if (g == NULL)
		return;
	/* Unlinked before unlocked: nobody finds a file whose run is over. */
	unlinkat(g->dfd, g->name, 0);
	close(g->fd);
	close(g->dfd);
	free(g);
}

/* Is pid running this program?  A pid reused since would get our SIGTERM. */
static bool
same_program(pid_t pid)
{
	char path[64], ours[4096], theirs[4096];
	ssize_t a, b;

	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	a = readlink("/proc/self/exe", ours, sizeof ours);
	b = readlink(path, theirs, sizeof theirs);
	return a > 0 && a == b && memcmp(ours, theirs, (size_t)a) == 0;
}

/* Wait until nobody holds the lock of fd: the run has ended. */
static bool
wait_unlocked(int fd, unsigned timeout_ms)
{
	struct timespec ts = { 0, 20000000 };
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000u;

	for (;;) {
		if (flock(fd, LOCK_SH | LOCK_NB) == 0)
			return true;
		if (now_ns() >= end)
			return false;
		nanosleep(&ts, NULL);
	}
}

int
gilreg_stop(pid_t target, pid_t *runner, unsigned timeout_ms, void (*self_stop)(void),
    char **cause)
{
	char name[32];
	int dfd, fd, rc = FP_OK;
	pid_t pid;

	*runner = 0;
	if ((dfd = open_dir(false, cause)) < 0)
		return *cause != NULL ? FP_ERR : FP_OK;
	snprintf(name, sizeof name, "%d", (int)target);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return FP_OK;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0 || (pid = read_pid(fd)) <= 0) {
		close(fd);
		return FP_OK;	/* registered by a run that ended (killed) */
	}
	*runner = pid;
	if (pid == getpid())
		self_stop();
	else if (!same_program(pid))
		rc = fail(cause, FP_ERR, "process %d, registered as running gilstat for process %d, "
		    "is not flight_profiler: left alone", (int)pid, (int)target);
	else if (kill(pid, SIGTERM) != 0)
		rc = fail(cause, errno == EPERM ? FP_EPERM : FP_ERR, "cannot end gilstat in "
		    "process %d: %s", (int)pid, strerror(errno));
	if (rc == FP_OK && !wait_unlocked(fd, timeout_ms))
		rc = fail(cause, FP_ERR, "process %d did not end its gilstat within %u ms", (int)pid,
		    timeout_ms);
	close(fd);
	return rc;
}
