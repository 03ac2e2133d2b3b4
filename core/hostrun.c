/*
 * hostrun — commands run at once, collected within a deadline (see hostrun.h).
 */
#include "config.h"

#include "core/hostrun.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a host may print: its records for a set of a few hundred processes fit. */
#define OUT_CAP (64u << 20)
#define ERR_CAP (64u << 10)

static void
start(struct hostrun *r)
{
	int out[2], err[2], null;

	r->out_fd = r->err_fd = -1;
	if (pipe2(out, O_CLOEXEC) != 0) {
		r->start_error = xasprintf("pipe: %s", strerror(errno));
		return;
	}
	if (pipe2(err, O_CLOEXEC) != 0) {
		r->start_error = xasprintf("pipe: %s", strerror(errno));
		close(out[0]);
		close(out[1]);
		return;
	}
	if ((r->pid = fork()) == 0) {
		null = open("/dev/null", O_RDONLY);
		if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0 ||
		    dup2(err[1], STDERR_FILENO) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		execvp(r->argv[0], r->argv);
		dprintf(STDERR_FILENO, "%s: %s\n", r->argv[0], strerror(errno));
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	if (r->pid < 0) {
		r->start_error = xasprintf("fork: %s", strerror(errno));
		close(out[0]);
		close(err[0]);
		return;
	}
	r->out_fd = out[0];
	r->err_fd = err[0];
}

/* Read what is there; false at the end (EOF or error), the fd then closed. */
static bool
drain(int *fd, struct sbuf *b, size_t cap)
{
	char buf[65536];
	ssize_t n = read(*fd, buf, sizeof buf);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		return false;
	}
	if (b->len + (size_t)n <= cap)
		sbuf_addn(b, buf, (size_t)n);
	return true;
}

/* Poll every open pipe until all are closed or the deadline; false on the deadline. */
static bool
collect(struct hostrun *r, size_t n, uint64_t deadline)
{
	struct pollfd *p = xcalloc(2 * n, sizeof *p);
	size_t i, np;
	uint64_t now;

	for (;;) {
		for (i = 0, np = 0; i < n; i++) {
			p[2 * i] = (struct pollfd){ .fd = r[i].out_fd, .events = POLLIN };
			p[2 * i + 1] = (struct pollfd){ .fd = r[i].err_fd, .events = POLLIN };
			np += (r[i].out_fd >= 0) + (r[i].err_fd >= 0);
		}
		if (np == 0 || (now = now_ns()) >= deadline)
			break;
		if (poll(p, 2 * n, (int)((deadline - now) / 1000000) + 1) < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++) {
			if (r[i].out_fd >= 0 && (p[2 * i].revents & (POLLIN | POLLHUP | POLLERR)))
				drain(&r[i].out_fd, &r[i].out, OUT_CAP);
			if (r[i].err_fd >= 0 && (p[2 * i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				drain(&r[i].err_fd, &r[i].err, ERR_CAP);
		}
	}
	free(p);
	return np == 0;
}

void
hostrun_all(struct hostrun *r, size_t n, double timeout_s)
{
	uint64_t deadline = now_ns() + (uint64_t)(timeout_s * 1e9);
	size_t i;
	int st;

	for (i = 0; i < n; i++)
		start(&r[i]);
	collect(r, n, deadline);
	for (i = 0; i < n; i++) {
		if (r[i].start_error != NULL)
			continue;
		/* Pipes still open at the deadline: the host has not answered. */
		if (r[i].out_fd >= 0 || r[i].err_fd >= 0) {
			r[i].timed_out = true;
			kill(r[i].pid, SIGKILL);
		}
		while (waitpid(r[i].pid, &st, 0) < 0 && errno == EINTR)
			;
		r[i].status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r[i].out_fd >= 0)
			close(r[i].out_fd);
		if (r[i].err_fd >= 0)
			close(r[i].err_fd);
		r[i].out_fd = r[i].err_fd = -1;
	}
}

void
hostrun_clear(struct hostrun *r)
{
	sbuf_free(&r->out);
	sbuf_free(&r->err);
	free(r->start_error);
	r->start_error = NULL;
}
