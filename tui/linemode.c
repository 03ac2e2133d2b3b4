#include "config.h"

#include "tui/linemode.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "core/command.h"
#include "core/runner.h"
#include "core/termsafe.h"
#include "core/util.h"
#include "tui/cmdline.h"
#include "tui/draw.h"
#include "tui/termguard.h"

#ifndef CTRL
#define CTRL(c) ((c) & 0x1f)
#endif

static volatile sig_atomic_t interrupted;

static void
on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

int
linemode_exec(struct runner *r, const char *line)
{
	struct sbuf text = { 0 };
	char *cause = NULL;
	int rc;

	rc = runner_exec(r, line, &text, &cause);
	/*
	 * The sink of --cmd and line mode: whatever a command forgot to
	 * escape, no control character reaches the terminal from here.
	 */
	termsafe_write(stdout, text.s ? text.s : "", text.len, TERMSAFE_TEXT);
	fflush(stdout);
	if (rc != FP_OK)
		termsafe_error(stderr, cause);
	free(cause);
	sbuf_free(&text);
	return rc;
}

/*
 * Run one command in a child: its output is copied to stdout as it comes;
 * SIGINT (Ctrl-C) ends the child, and with it the command.
 */
static int
run_cancellable(struct runner *r, const char *line)
{
	char buf[8192];
	int fds[2], status;
	bool cancelled = false;
	ssize_t n;
	pid_t child;

	fflush(stdout);
	fflush(stderr);
	if (pipe(fds) != 0)
		return linemode_exec(r, line);
	if ((child = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		return linemode_exec(r, line);
	}
	if (child == 0) {
		close(fds[0]);
		runner_forget_session(r);
		guard_install();	/* SIGINT: let the target's threads go, then die */
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(FP_ERR);
		close(fds[1]);
		_exit(linemode_exec(r, line));
	}
	close(fds[1]);
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };

		/*
		 * Each Ctrl-C goes on to the child.  The flag is looked at on
		 * every turn, not only when a call returns EINTR: a SIGINT that
		 * came while this copied output would otherwise wait for the
		 * child's next line (gilstat's next report), or for ever.  The
		 * wait is short for the same reason.
		 */
		if (interrupted) {
			interrupted = 0;
			cancelled = true;
			kill(child, SIGINT);
		}
		if (poll(&pfd, 1, 100) <= 0)
			continue;	/* EINTR or nothing yet */
		n = read(fds[0], buf, sizeof buf);
		if (n > 0) {
			fwrite(buf, 1, (size_t)n, stdout);
			fflush(stdout);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	if (cancelled)
		interrupted = 1;	/* the command loop sees it was cancelled */
	close(fds[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "flight_profiler: cancelled\n");
		return FP_ERR;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : FP_ERR;
}

/*
 * `mem sites start|diff|stop` (without -i): tracemalloc started by a
 * client ends when it leaves, so these run on the prompt's own connection,
 * not in a child's.  They are quick: Ctrl-C has nothing to cancel.
 */
static bool
keeps_state(const char *line)
{
	struct cmd_request *req = NULL;
	bool keep;

	if (command_parse(line, &req, NULL) != FP_OK || req == NULL)
		return false;
	keep = req->spec->run == runner_cmd_mem_sites && command_opt(req, "--interval") == NULL;
	command_request_free(req);
	return keep;
}

/* `quit` (q, exit): the command table's, bound here while the prompt runs. */
static int
linemode_quit(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	(void)req;
	(void)out;
	(void)cause;
	*(bool *)ctx = true;
	return FP_OK;
}

/* ---- reading a line on a terminal ----------------------------------------- */

struct term {
	int in, out;		/* out: where the prompt and echo go */
	struct termios cooked;
	const char *prompt;
	int shown;		/* cells of the line as last shown */
};

static void
tput(struct term *t, const char *s)
{
	(void)!write(t->out, s, strlen(s));
}

/* Text that may hold the target's (completed names): escaped. */
static void
tput_safe(struct term *t, const char *s)
{
	struct sbuf b = { 0 };

	termsafe_adds(&b, s, TERMSAFE_FIELD);
	tput(t, b.s);
	sbuf_free(&b);
}

/*
 * Show prompt + line with the cursor in place, using only \r, \b and
 * spaces.  The line is shown escaped (a completion may have put the
 * target's names in it), and measured as shown.
 */
static void
show(struct term *t, const struct cmdline *c)
{
	const char *text = cmdline_text(c);
	struct sbuf s = { 0 }, shown = { 0 }, tail = { 0 };
	int w, after, i;

	termsafe_adds(&shown, text, TERMSAFE_FIELD);
	termsafe_adds(&tail, text + c->cursor, TERMSAFE_FIELD);
	w = text_width(shown.s, shown.len);
	after = text_width(tail.s, tail.len);
	sbuf_add(&s, "\r");
	sbuf_add(&s, t->prompt);
	sbuf_add(&s, shown.s);
	for (i = w; i < t->shown; i++)
		sbuf_add(&s, " ");
	for (i = w; i < t->shown; i++)
		sbuf_add(&s, "\b");
	for (i = 0; i < after; i++)
		sbuf_add(&s, "\b");
	(void)!write(t->out, s.s, s.len);
	sbuf_free(&s);
	sbuf_free(&shown);
	sbuf_free(&tail);
	t->shown = w;
}

/* A line into *out (malloc'd); false on end of input. */
/* Tab: complete the word, or list the candidates under the line. */
static void
tty_complete(struct term *t, struct cmdline *c)
{
	char *note;
	size_t k, n2;
	char **cands = cmdline_complete(c, NULL, &n2, &note);

	if (n2 > 1 || (n2 == 0 && note != NULL)) {
		tput(t, "\r\n");
		for (k = 0; k < n2; k++) {
			tput_safe(t, cands[k]);
			tput(t, "  ");
		}
		if (n2 == 0)
			tput_safe(t, note);
		tput(t, "\r\n");
		t->shown = 0;
	}
	strv_free(cands, n2);
	free(note);
}

/* ESC [ A / ESC O A and friends: the arrows, Home, End, Delete. */
static void
tty_escape(struct term *t, struct cmdline *c)
{
	unsigned char seq[2];

	if (read(t->in, &seq[0], 1) != 1 || read(t->in, &seq[1], 1) != 1)
		return;
	if (seq[0] != '[' && seq[0] != 'O')
		return;
	if (seq[1] == 'A')
		cmdline_history_prev(c);
	else if (seq[1] == 'B')
		cmdline_history_next(c);
	else if (seq[1] == 'C')
		cmdline_right(c);
	else if (seq[1] == 'D')
		cmdline_left(c);
	else if (seq[1] == 'H')
		cmdline_home(c);
	else if (seq[1] == 'F')
		cmdline_end(c);
	else if (seq[1] == '3' && read(t->in, &seq[0], 1) == 1 && seq[0] == '~')
		cmdline_delete(c);
}

static bool
read_line_tty(struct term *t, struct cmdline *c, char **out)
{
	struct termios raw = t->cooked;
	bool ok = true, done = false;
	unsigned char ch;
	char mb[2];

	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG | IEXTEN);
	raw.c_iflag &= ~(tcflag_t)(IXON | ICRNL);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	tcsetattr(t->in, TCSADRAIN, &raw);
	cmdline_clear(c);
	t->shown = 0;
	show(t, c);
	while (!done) {
		ssize_t n = read(t->in, &ch, 1);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			ok = false;
			break;
		}
		switch (ch) {
		case '\r':
		case '\n':
			done = true;
			break;
		case CTRL('d'):
			if (c->buf.len == 0) {
				ok = false;
				done = true;
			} else {
				cmdline_delete(c);
			}
			break;
		case CTRL('c'):
			tput(t, "^C\r\n");
			cmdline_clear(c);
			t->shown = 0;
			break;
		case 127:
		case CTRL('h'):
			cmdline_backspace(c);
			break;
		case CTRL('u'):
			cmdline_kill_start(c);
			break;
		case CTRL('k'):
			cmdline_kill_end(c);
			break;
		case CTRL('w'):
			cmdline_kill_word(c);
			break;
		case CTRL('a'):
			cmdline_home(c);
			break;
		case CTRL('e'):
			cmdline_end(c);
			break;
		case CTRL('b'):
			cmdline_left(c);
			break;
		case CTRL('f'):
			cmdline_right(c);
			break;
		case CTRL('p'):
			cmdline_history_prev(c);
			break;
		case CTRL('n'):
			cmdline_history_next(c);
			break;
		case '\t':
			tty_complete(t, c);
			break;
		case 27:
			tty_escape(t, c);
			break;
		default:
			if (ch >= 32) {
				mb[0] = (char)ch;
				mb[1] = '\0';
				cmdline_insert(c, mb);
			}
		}
		if (!done)
			show(t, c);
	}
	tcsetattr(t->in, TCSADRAIN, &t->cooked);
	tput(t, "\r\n");
	if (ok)
		*out = xstrdup(cmdline_text(c));
	return ok;
}

int
linemode_run(struct runner *r, pid_t pid)
{
	struct sigaction sa;
	struct term term = { 0 };
	struct cmdline edit;
	struct history *hist = NULL;
	char *line = NULL, *hpath, prompt[64];
	size_t alloc = 0;
	bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &term.cooked) == 0;
	bool leave = false;
	const struct cmd_spec *spec;
	int rc = FP_OK;

	command_bind("quit", linemode_quit, &leave);

	/* Ctrl-C cancels the running command, not the session. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);

	if (tty) {
		term.in = STDIN_FILENO;
		term.out = isatty(STDOUT_FILENO) ? STDOUT_FILENO : isatty(STDERR_FILENO) ? STDERR_FILENO : -1;
		if (term.out < 0)
			tty = false;
	}
	if (tty) {
		snprintf(prompt, sizeof prompt, "flight_profiler %d> ", (int)pid);
		term.prompt = prompt;
		hpath = history_default_path();
		hist = history_open(hpath);
		free(hpath);
		cmdline_init(&edit, hist);
	}
	for (;;) {
		char *p, *end;

		interrupted = 0;
		if (tty) {
			free(line);
			line = NULL;
			if (!read_line_tty(&term, &edit, &line))
				break;
		} else {
			ssize_t n = getline(&line, &alloc, stdin);

			if (n < 0) {
				if (errno == EINTR && interrupted) {
					clearerr(stdin);
					rc = FP_ERR;
				}
				break;
			}
		}
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		for (end = p + strlen(p); end > p && (end[-1] == '\n' || end[-1] == '\r' ||
		    end[-1] == ' ' || end[-1] == '\t'); end--)
			;
		*end = '\0';
		if (*p == '\0')
			continue;
		if (tty)
			history_add(hist, p);
		/* The prompt's own commands (quit) run here, not in a child. */
		spec = command_of_line(p);
		if (spec != NULL && (spec->flags & CMD_LINEMODE)) {
			int qrc = linemode_exec(r, p);

			if (leave)
				break;	/* the status stays the last command's */
			rc = qrc;
			continue;
		}
		/* What the agent keeps for a connection must outlive the command. */
		rc = keeps_state(p) ? linemode_exec(r, p) : run_cancellable(r, p);
	}
	command_bind("quit", NULL, NULL);
	free(line);
	if (tty) {
		cmdline_free(&edit);
		history_close(hist);
	}
	return rc;
}
