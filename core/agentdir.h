/*
 * agentdir — the agent's directory of a target, /tmp/.flight_profiler-<pid>
 * in its mount namespace, and the socket in it, proven before use.
 *
 * /tmp belongs to everyone: any local user can create that name before the
 * agent does and put a socket of their own in it.  So every component is
 * opened through file descriptors and checked where it is (no symlink,
 * owned by the target's uid or root, the directory 0700), the socket is
 * reached through the checked directory's descriptor, and after connect
 * the listener's SO_PEERCRED must be the target process itself.  Only then
 * may a byte be sent (doc/security.md).
 *
 * Must never: connect through, or read from, a directory it has not
 * checked; hand out a connection whose listener is not the target; fall
 * back to anything weaker when a check fails.
 */
#ifndef FP_AGENTDIR_H
#define FP_AGENTDIR_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * The target's /tmp, resolved inside its root (a symlinked /tmp of a
 * container resolves as the target sees it), opened O_PATH: a directory of
 * root, of the target's uid or of the owner of the target's root, sticky
 * when others may write it.  *uid is the target's uid.  Returns an enum
 * fp_status: FP_EPERM for a refusal, FP_ENOPROC, FP_ERR.
 */
int agentdir_open_tmp(pid_t pid, int *tfd, uid_t *uid, char **cause);

/*
 * Open /tmp/.flight_profiler-<pid> in the target's /tmp (tfd, from
 * agentdir_open_tmp) with O_DIRECTORY | O_NOFOLLOW | flags (O_PATH or
 * O_RDONLY).  FP_OK with *dfd = -1 when it does not exist; a symlink or
 * anything not a directory is refused (FP_EPERM, naming its owner).  The
 * directory is not checked yet: agentdir_check does that.
 */
int agentdir_open(pid_t pid, int tfd, uid_t uid, int flags, int *dfd, char **cause);

/*
 * Check an open agent directory: a directory (not a symlink: open it with
 * O_NOFOLLOW), owned by `uid` or root, mode exactly 0700.  FP_EPERM with
 * the one-line refusal otherwise.
 */
int agentdir_check(pid_t pid, int dfd, uid_t uid, char **cause);

/*
 * Connect to the agent of pid: the directory and the socket checked, the
 * listener proven to be pid (running as its uid or root) before anything is
 * sent.  On FP_OK *fd is the connected socket (the caller owns it).
 * *nobody (may be NULL) is set when no agent listens there: no directory,
 * no socket, or a stale one; any refusal is FP_EPERM with *cause naming the
 * path and the owner found.
 */
int agentdir_connect(pid_t pid, int *fd, bool *nobody, char **cause);

/*
 * A small report file of the checked agent directory (agent.err, ...),
 * trailing blanks cut; NULL when absent, not a regular file of the
 * target's uid or root, or the directory does not pass the checks.
 */
char *agentdir_read(pid_t pid, const char *name);

#endif
