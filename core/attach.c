#include "config.h"

#include "core/attach.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/agentdir.h"
#include "core/procfs.h"
#include "core/pyruntime.h"

#ifndef FP_PKGLIBDIR
#define FP_PKGLIBDIR "/usr/local/lib/flight_profiler"
#endif

#define AGENT_START_MS 10000	/* from injection to a socket that answers */
#define PEP768_TAKE_MS 2000	/* for a thread to take a PEP 768 request */
#define BOOT_SCRIPT "fpboot.py"	/* the PEP 768 bootstrap, in the agent directory */
#define BOOT_ERR "bootstrap.err"	/* what it reports when it fails */
#define JANSSON_SONAME "libjansson.so.4"

/* The program's injectors (inject/loader.c), or NULL: connect only. */
static const struct attach_loader *loader;

void
attach_set_loader(const struct attach_loader *l)
{
	loader = l;
}

char *
attach_target_dir(pid_t pid)
{
	return xasprintf("/tmp/.flight_profiler-%d", (int)pid);
}

/* A path of the agent directory as this process reaches it. */
static char *
host_path(pid_t pid, const char *file)
{
	return xasprintf("/proc/%d/root/tmp/.flight_profiler-%d%s%s", (int)pid, (int)pid,
	    file ? "/" : "", file ? file : "");
}

static bool
readable(const char *path)
{
	return access(path, R_OK) == 0;
}

char *
attach_find_agent(unsigned minor, char **cause)
{
	char name[32], exe[PATH_MAX], *p, *where[3] = { NULL, NULL, NULL };
	const char *env = getenv("FP_AGENT_DIR");
	ssize_t n;
	size_t i;

	snprintf(name, sizeof name, "fpagent-cp3%u.so", minor);
	if (env != NULL && *env != '\0')
		where[0] = xasprintf("%s/%s", env, name);
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((p = strrchr(exe, '/')) != NULL)
			*p = '\0';
		where[1] = xasprintf("%s/%s", exe, name);
	}
	where[2] = xasprintf("%s/%s", FP_PKGLIBDIR, name);
	for (i = 0; i < FP_NELEM(where); i++) {
		if (where[i] != NULL && readable(where[i])) {
			p = where[i];
			where[i] = NULL;
			for (i = 0; i < FP_NELEM(where); i++)
				free(where[i]);
			return p;
		}
	}
	fail(cause, FP_EVERSION, "no agent for CPython 3.%u (%s not in %s%s%s%s): this "
	    "flight_profiler was not built for 3.%u; reconfigure with "
	    "--with-python=/path/to/python3.%u (with its headers) and rebuild; "
	    "commands that read from outside (stack) still work", minor, name,
	    env ? env : "", env ? ", " : "", n > 0 ? exe : "", n > 0 ? " or " FP_PKGLIBDIR : FP_PKGLIBDIR,
	    minor, minor);
	for (i = 0; i < FP_NELEM(where); i++)
		free(where[i]);
	return NULL;
}

/* libjansson.so.4 next to the agent, else the one this process uses. */
static char *
find_jansson(const char *agent, char **cause)
{
	char *dir = xstrdup(agent), *slash = strrchr(dir, '/'), *path;
	Dl_info info;

	if (slash != NULL)
		*slash = '\0';
	path = xasprintf("%s/%s", dir, JANSSON_SONAME);
	free(dir);
	if (readable(path))
		return path;
	free(path);
	if (dladdr((void *)json_object, &info) != 0 && info.dli_fname != NULL &&
	    info.dli_fname[0] == '/' && readable(info.dli_fname))
		return xstrdup(info.dli_fname);
	fail(cause, FP_ERR, "cannot find %s to copy next to the agent (apt-get install libjansson4)",
	    JANSSON_SONAME);
	return NULL;
}

static gid_t
target_gid(pid_t pid)
{
	char path[64], *text, *line;
	gid_t gid = (gid_t)-1;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((text = read_file_str(path, NULL)) == NULL)
		return gid;
	line = strstr(text, "\nGid:");
	if (line != NULL)
		gid = (gid_t)strtoul(line + 5, NULL, 10);
	free(text);
	return gid;
}

/*
 * Copy `src` to `name` in the directory dfd (owned by uid), atomically
 * (a temporary name, then rename), unless an identical copy is there.
 */
static int
copy_into(int dfd, const char *name, const char *src, uid_t uid, gid_t gid, char **cause)
{
	struct stat sst, dst;
	char tmp[64], buf[65536];
	struct timespec times[2];
	int in, out;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &sst) != 0) {
		if (in >= 0)
			close(in);
		return fail(cause, FP_ERR, "cannot read %s: %s", src, strerror(errno));
	}
	if (fstatat(dfd, name, &dst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(dst.st_mode) &&
	    dst.st_size == sst.st_size && dst.st_mtim.tv_sec == sst.st_mtim.tv_sec &&
	    dst.st_mtim.tv_nsec == sst.st_mtim.tv_nsec && dst.st_uid == uid) {
		close(in);
		return FP_OK;	/* copied before */
	}
	snprintf(tmp, sizeof tmp, ".%s.%d.tmp", name, (int)getpid());
	unlinkat(dfd, tmp, 0);
	out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
	if (out < 0) {
		close(in);
		return fail(cause, FP_ERR, "cannot create %s in the agent directory: %s", tmp,
		    strerror(errno));
	}
	while ((n = read(in, buf, sizeof buf)) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	}
	close(in);
	if (n < 0) {
		close(out);
		unlinkat(dfd, tmp, 0);
		return fail(cause, FP_ERR, "cannot copy %s: %s", src, strerror(errno));
	}
	if (geteuid() == 0 && uid != 0)
		(void)!fchown(out, uid, gid);
	times[0] = sst.st_atim;
	times[1] = sst.st_mtim;
	futimens(out, times);
	close(out);
	if (renameat(dfd, tmp, dfd, name) != 0) {
		unlinkat(dfd, tmp, 0);
		return fail(cause, FP_ERR, "cannot install %s in the agent directory: %s", name,
		    strerror(errno));
	}
	return FP_OK;
}

/* Write `len` bytes as `name` in the directory dfd (owned by uid), atomically. */
static int
write_into(int dfd, const char *name, const char *data, size_t len, uid_t uid, gid_t gid,
    char **cause)
{
	char tmp[64];
	int out;

	snprintf(tmp, sizeof tmp, ".%s.%d.tmp", name, (int)getpid());
	unlinkat(dfd, tmp, 0);
	out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return fail(cause, FP_ERR, "cannot create %s in the agent directory: %s", tmp,
		    strerror(errno));
	if (write(out, data, len) != (ssize_t)len) {
		int e = errno;

		close(out);
		unlinkat(dfd, tmp, 0);
		return fail(cause, FP_ERR, "cannot write %s in the agent directory: %s", name,
		    strerror(e));
	}
	if (geteuid() == 0 && uid != 0)
		(void)!fchown(out, uid, gid);
	close(out);
	if (renameat(dfd, tmp, dfd, name) != 0) {
		unlinkat(dfd, tmp, 0);
		return fail(cause, FP_ERR, "cannot install %s in the agent directory: %s", name,
		    strerror(errno));
	}
	return FP_OK;
}

/* A directory of ours that is not yet as the agent wants it: make it so. */
static void
fix_dir(int dfd, uid_t uid, gid_t gid)
{
	struct stat st;

	if (fstat(dfd, &st) != 0 || st.st_uid != geteuid())
		return;		/* not ours: agentdir_check judges it */
	if (st.st_uid != uid)
		(void)!fchown(dfd, uid, gid);
	if ((st.st_mode & 07777) != 0700)
		(void)!fchmod(dfd, 0700);
}

/*
 * Make the agent directory in the target's /tmp: 0700, owned by the
 * target's uid, not a symlink, not someone else's (core/agentdir refuses
 * those).  Returns an open fd.
 */
static int
prepare_dir(pid_t pid, int *dfdp, uid_t *uidp, char **cause)
{
	gid_t gid = target_gid(pid);
	char name[48];
	uid_t uid;
	int tfd, dfd, rc, e;

	*dfdp = -1;
	if ((rc = agentdir_open_tmp(pid, &tfd, &uid, cause)) != FP_OK)
		return rc;
	snprintf(name, sizeof name, ".flight_profiler-%d", (int)pid);
	if (mkdirat(tfd, name, 0700) != 0 && errno != EEXIST) {
		e = errno;
		close(tfd);
		return fail(cause, e == EACCES ? FP_EPERM : FP_ERR,
		    "cannot create /tmp/%s for process %d: %s", name, (int)pid, strerror(e));
	}
	rc = agentdir_open(pid, tfd, uid, O_RDONLY, &dfd, cause);
	close(tfd);
	if (rc == FP_OK && dfd < 0)
		rc = fail(cause, FP_ERR, "/tmp/%s of process %d vanished as it was made", name, (int)pid);
	if (rc != FP_OK)
		return rc;
	fix_dir(dfd, uid, gid);
	if ((rc = agentdir_check(pid, dfd, uid, cause)) != FP_OK) {
		close(dfd);
		return rc;
	}
	*dfdp = dfd;
	*uidp = uid;
	return FP_OK;
}

/* A report file of the agent directory, trailing blanks cut, or NULL. */
static char *
report_file(pid_t pid, const char *name)
{
	return agentdir_read(pid, name);
}

/* The agent's own words on why it could not start (agent.err), or NULL. */
static char *
agent_error(pid_t pid)
{
	return report_file(pid, "agent.err");
}

/* The path of an agent library mapped in pid, or NULL. */
static char *
mapped_agent(pid_t pid)
{
	struct proc_maps maps = { 0 };
	const char *base;
	char *found = NULL;
	size_t i;

	if (procfs_maps_read(pid, &maps, NULL) != FP_OK)
		return NULL;
	for (i = 0; i < maps.n && found == NULL; i++) {
		if (maps.maps[i].path == NULL)
			continue;
		base = strrchr(maps.maps[i].path, '/');
		base = base ? base + 1 : maps.maps[i].path;
		if (strncmp(base, "fpagent-cp", 10) == 0)
			found = xstrdup(maps.maps[i].path);
	}
	procfs_maps_free(&maps);
	return found;
}

/*
 * The one way to a session with the agent of pid: the socket reached
 * through checked files and its listener proven to be pid before the
 * first byte (core/agentdir), then the handshake.  *nobody as for
 * agentdir_connect.
 */
static int
connect_agent(pid_t pid, int timeout_ms, struct session **s, bool *nobody, char **cause)
{
	int fd, rc;

	*s = NULL;
	if ((rc = agentdir_connect(pid, &fd, nobody, cause)) != FP_OK)
		return rc;
	return session_open(pid, fd, timeout_ms, s, cause);
}

/*
 * Wait for the agent's socket to answer.  With boot_failed (PEP 768), a
 * report of the bootstrap script ends the wait early and sets it.
 */
static int
wait_for_agent(pid_t pid, struct session **s, bool *boot_failed,
    char **cause)
{
	uint64_t deadline = now_ns() + (uint64_t)AGENT_START_MS * 1000000;
	struct timespec pause = { 0, 500 * 1000 };
	bool nobody;
	char *why, *err;
	int rc;

	for (;;) {
		if (boot_failed != NULL && (err = report_file(pid, BOOT_ERR)) != NULL) {
			*boot_failed = true;
			rc = fail(cause, FP_ERR, "the PEP 768 bootstrap could not load the agent into "
			    "process %d: %s", (int)pid, err);
			free(err);
			return rc;
		}
		why = NULL;
		rc = connect_agent(pid, SESSION_HANDSHAKE_MS, s, &nobody, &why);
		if (rc == FP_OK || !nobody) {
			if (rc != FP_OK)
				fail(cause, rc, "%s", why);
			free(why);
			return rc;
		}
		free(why);
		if ((err = agent_error(pid)) != NULL) {
			rc = fail(cause, FP_ERR, "the agent was loaded into process %d but could not "
			    "start: %s", (int)pid, err);
			free(err);
			return rc;
		}
		if (!procfs_exists(pid))
			return fail(cause, FP_EEXITED, "process %d exited", (int)pid);
		if (now_ns() > deadline) {
			char *lib = boot_failed != NULL ? mapped_agent(pid) : NULL;

			if (boot_failed != NULL && lib == NULL)
				return fail(cause, FP_ERR, "process %d took the PEP 768 request but did "
				    "not load the agent within %d s: the bootstrap script did not run to "
				    "its end (an audit hook may refuse cpython.remote_debugger_script)",
				    (int)pid, AGENT_START_MS / 1000);
			free(lib);
			return fail(cause, FP_ERR, "the agent was loaded into process %d but did not open "
			    "its socket within %d s (is the interpreter initialized?)", (int)pid,
			    AGENT_START_MS / 1000);
		}
		nanosleep(&pause, NULL);
	}
}

/*
 * The process an agent library was loaded for, from the name of its
 * directory (/tmp/.flight_profiler-<pid>/fpagent-cp3XY.so), or 0.
 */
static pid_t
mapped_owner(const char *lib)
{
	const char *slash = strrchr(lib, '/'), *dir;
	static const char prefix[] = "/.flight_profiler-";
	char *end;
	long v;

	for (dir = slash; dir != NULL && dir > lib && dir[-1] != '/'; dir--)
		;
	if (slash == NULL || dir == NULL || dir == lib ||
	    strncmp(dir - 1, prefix, sizeof prefix - 1) != 0)
		return 0;
	v = strtol(dir - 1 + sizeof prefix - 1, &end, 10);
	return end == slash && v > 0 ? (pid_t)v : 0;
}

/*
 * pid inherited through fork() the agent that `owner` loaded: the child's
 * copy is dormant (its threads did not survive the fork; see
 * inject/agent/server.c).  Start it again in pid with pid's own directory:
 * its bootstrap called a second time, through dlopen() of the name it was
 * loaded by, which returns the copy already there (never a second one).
 */
static int
attach_rearm(pid_t pid, pid_t owner, const char *mapped, struct session **s, char **cause)
{
	char *name = xstrdup(strrchr(mapped, '/') + 1), *cut, *odir, *lib, *dir, *why = NULL;
	bool nobody;
	uid_t uid;
	int rc, dfd;

	if ((cut = strstr(name, " (deleted)")) != NULL)
		*cut = '\0';
	odir = attach_target_dir(owner);
	lib = xasprintf("%s/%s", odir, name);
	dir = attach_target_dir(pid);
	if ((rc = prepare_dir(pid, &dfd, &uid, cause)) != FP_OK)
		goto out;
	/* One at a time; another flight_profiler may have done it meanwhile. */
	if (flock(dfd, LOCK_EX) == 0 &&
	    connect_agent(pid, SESSION_HANDSHAKE_MS, s, &nobody, &why) == FP_OK) {
		rc = FP_OK;
	} else {
		unlinkat(dfd, "agent.sock", 0);
		unlinkat(dfd, "agent.err", 0);
		free(why);
		why = NULL;
		if ((rc = loader->inject(pid, lib, "fp_agent_start", dir, true, &why)) != FP_OK)
			fail(cause, rc, "process %d inherited the agent of process %d through "
			    "fork(); starting it there failed: %s", (int)pid, (int)owner, why);
		else
			rc = wait_for_agent(pid, s, NULL, cause);
	}
	close(dfd);
out:
	free(why);
	free(name);
	free(odir);
	free(lib);
	free(dir);
	return rc;
}

/*
 * 3.14+: have the interpreter load the agent itself (PEP 768): it runs the
 * bootstrap script fpboot.py of the agent directory on one of its threads
 * at its next eval-breaker check.  *fallback says whether the ptrace
 * injector may be tried after a failure: never after a refusal by the
 * target's owner, nor once the interpreter took the request.
 */
static int
attach_pep768(pid_t pid, int dfd, const char *dir, const char *lib, uid_t uid, gid_t gid,
    struct session **s, bool *fallback, char **cause)
{
	char *src, *script;
	bool boot_failed = false;
	int rc;

	*fallback = true;
	src = loader->pep768_source(dir, lib);
	unlinkat(dfd, BOOT_ERR, 0);
	rc = write_into(dfd, BOOT_SCRIPT, src, strlen(src), uid, gid, cause);
	free(src);
	if (rc != FP_OK)
		return rc;
	script = xasprintf("%s/%s", dir, BOOT_SCRIPT);
	rc = loader->pep768_run(pid, script, PEP768_TAKE_MS, fallback, cause);
	free(script);
	if (rc != FP_OK)
		return rc;
	/* Taken (perhaps just as it was withdrawn): the script runs. */
	*fallback = false;
	rc = wait_for_agent(pid, s, &boot_failed, cause);
	if (boot_failed)
		*fallback = true;	/* no agent loaded: ctypes missing, say */
	return rc;
}

int
attach_agent(pid_t pid, enum attach_mode mode, unsigned python_hex, struct session **s,
    char **cause)
{
	char *sock = host_path(pid, "agent.sock"), *why = NULL, *agent = NULL, *jansson = NULL;
	char *dir = NULL, *lib = NULL, *mapped, name[32], *pep_why = NULL;
	struct pyruntime *rt;
	bool nobody = false;
	uid_t uid = 0;
	gid_t gid;
	int rc, dfd = -1;

	*s = NULL;
	/*
	 * A running agent answers: never load it twice.  Only looking (for
	 * `stack`'s thread names), do not wait long for a wedged one.
	 */
	rc = connect_agent(pid, mode == ATTACH_LOAD ? SESSION_HANDSHAKE_MS : 500, s, &nobody,
	    &why);
	if (rc == FP_OK || !nobody) {
		if (rc != FP_OK)
			fail(cause, rc, "%s", why);
		goto out;
	}
	if (!procfs_exists(pid)) {
		rc = fail(cause, FP_ENOPROC, "no process with pid %d", (int)pid);
		goto out;
	}
	if (mode == ATTACH_IF_RUNNING) {
		rc = FP_OK;	/* *s NULL: none runs */
		goto out;
	}
	if (mode == ATTACH_EXISTING) {
		rc = fail(cause, FP_ERR, "no flight_profiler agent runs in process %d", (int)pid);
		goto out;
	}
	if (loader == NULL) {
		rc = fail(cause, FP_ERR, "no flight_profiler agent runs in process %d and this "
		    "program cannot load one", (int)pid);
		goto out;
	}
	if ((mapped = mapped_agent(pid)) != NULL) {
		pid_t owner = mapped_owner(mapped);
		char *err;

		if (owner > 0 && owner != pid) {
			rc = attach_rearm(pid, owner, mapped, s, cause);
			free(mapped);
			goto out;
		}
		/*
		 * Another flight_profiler may be starting it right now: give it the
		 * time an agent has to open its socket before calling it wedged.
		 */
		free(why);
		why = NULL;
		if ((rc = wait_for_agent(pid, s, NULL, &why)) == FP_OK || rc == FP_EPERM) {
			if (rc != FP_OK)
				fail(cause, rc, "%s", why);	/* a refusal says it all */
			free(mapped);
			goto out;
		}
		err = agent_error(pid);
		rc = fail(cause, FP_ERR, "the flight_profiler agent %s is loaded in process %d but "
		    "does not answer on %s%s%s; it is never loaded twice", mapped, (int)pid, sock,
		    err ? ": " : "", err ? err : "");
		free(err);
		free(mapped);
		goto out;
	}
	if (python_hex == 0) {
		if ((rc = pyruntime_open(pid, &rt, cause)) != FP_OK)
			goto out;
		python_hex = rt->version_hex;
		pyruntime_close(rt);
	}
	/* 3.14+: a target that refuses debuggers is told so before anything else. */
	if (loader->pep768_applies(python_hex) && (pep_why = loader->pep768_refusal(pid)) != NULL) {
		rc = fail(cause, FP_EPERM, "%s", pep_why);
		goto out;
	}
	if ((agent = attach_find_agent((python_hex >> 16) & 0xff, cause)) == NULL) {
		rc = FP_EVERSION;
		goto out;
	}
	if ((jansson = find_jansson(agent, cause)) == NULL) {
		rc = FP_ERR;
		goto out;
	}
	if ((rc = prepare_dir(pid, &dfd, &uid, cause)) != FP_OK)
		goto out;
	/*
	 * One loader at a time per target: a second flight_profiler started
	 * meanwhile waits here, then finds the agent the first one loaded.
	 */
	if (flock(dfd, LOCK_EX) == 0) {
		free(why);
		why = NULL;
		rc = connect_agent(pid, SESSION_HANDSHAKE_MS, s, &nobody, &why);
		if (rc == FP_OK || rc == FP_EPERM) {
			if (rc != FP_OK)
				fail(cause, rc, "%s", why);	/* never load over a refusal */
			goto out;
		}
		if ((mapped = mapped_agent(pid)) != NULL) {
			free(mapped);
			rc = wait_for_agent(pid, s, NULL, cause);
			goto out;
		}
	}
	snprintf(name, sizeof name, "fpagent-cp3%u.so", (python_hex >> 16) & 0xff);
	gid = target_gid(pid);
	if ((rc = copy_into(dfd, name, agent, uid, gid, cause)) != FP_OK ||
	    (rc = copy_into(dfd, JANSSON_SONAME, jansson, uid, gid, cause)) != FP_OK)
		goto out;
	/* A stale socket or error report of an earlier agent of this pid. */
	unlinkat(dfd, "agent.sock", 0);
	unlinkat(dfd, "agent.err", 0);
	dir = attach_target_dir(pid);
	lib = xasprintf("%s/%s", dir, name);
	/*
	 * 3.14+ first asks the interpreter (PEP 768); below 3.14 the request
	 * fields do not exist and this is never tried.
	 */
	if (loader->pep768_applies(python_hex)) {
		bool fallback;

		rc = attach_pep768(pid, dfd, dir, lib, uid, gid, s, &fallback, &pep_why);
		if (rc == FP_OK)
			goto out;
		if (!fallback) {
			fail(cause, rc, "%s", pep_why);
			goto out;
		}
	}
	free(why);
	why = NULL;
	if ((rc = loader->inject(pid, lib, "fp_agent_start", dir, false, &why)) != FP_OK) {
		if (pep_why != NULL)
			fail(cause, rc, "%s (PEP 768 was tried first: %s)", why, pep_why);
		else
			fail(cause, rc, "%s", why);
		goto out;
	}
	rc = wait_for_agent(pid, s, NULL, cause);
out:
	if (dfd >= 0)
		close(dfd);
	free(why);
	free(sock);
	free(agent);
	free(jansson);
	free(dir);
	free(lib);
	free(pep_why);
	return rc;
}
