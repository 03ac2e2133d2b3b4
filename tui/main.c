/*
 * flight_profiler — attach to a live CPython process.
 *
 *   flight_profiler PID --cmd "stack --native"   one command, plain text
 *   flight_profiler PID                          interactive prompt
 *
 * main() is the only place that exits; everything below returns a status.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/runner.h"
#include "core/tstop.h"
#include "core/util.h"

static const char usage_text[] =
"usage: flight_profiler [options] PID\n"
"       flight_profiler [options] PID --cmd COMMAND\n"
"       flight_profiler --cmd 'stack PID'\n"
"\n"
"Attach to a running CPython 3.8+ process to look inside it without\n"
"restarting it.  With --cmd, run one command, print plain text and exit\n"
"with its status; otherwise read commands at a prompt (`help` lists them).\n"
"\n"
"options:\n"
"  -c, --cmd COMMAND   run COMMAND (e.g. \"stack --native\") and exit\n"
"  -h, --help          show this help\n"
"  -V, --version       show the version\n"
"\n"
"exit status:\n"
"  0  success\n"
"  1  other error (the message says what happened)\n"
"  2  usage error: bad option, command or argument\n"
"  3  no such process\n"
"  4  permission denied (another user's process, ptrace restrictions,\n"
"     or a missing CAP_SYS_PTRACE in a container)\n"
"  5  not a Python process\n"
"  6  unsupported or unknown Python version\n"
"  7  the process exited while being read\n";

static void
release_and_reraise(int sig)
{
	/* Never leave a thread of the target stopped or traced. */
	tstop_release_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
install_signal_handlers(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS,
	    SIGABRT, SIGFPE, SIGILL };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = release_and_reraise;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESETHAND;
	for (i = 0; i < FP_NELEM(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	atexit(tstop_release_all);
}

static int
run_line(struct runner *r, const char *line, FILE *out)
{
	struct sbuf text = { 0 };
	char *cause = NULL;
	int rc;

	rc = runner_exec(r, line, &text, &cause);
	if (text.len > 0)
		fwrite(text.s, 1, text.len, out);
	fflush(out);
	if (rc != FP_OK)
		fprintf(stderr, "flight_profiler: %s\n", cause ? cause : "failed");
	free(cause);
	sbuf_free(&text);
	return rc;
}

/* A plain prompt until the TUI lands: one command per line, Ctrl-D leaves. */
static int
prompt_loop(struct runner *r, pid_t pid)
{
	char *line = NULL;
	size_t alloc = 0;
	ssize_t n;
	int tty = isatty(STDIN_FILENO), rc = FP_OK;

	for (;;) {
		if (tty) {
			printf("flight_profiler %d> ", (int)pid);
			fflush(stdout);
		}
		n = getline(&line, &alloc, stdin);
		if (n < 0)
			break;
		if (strncmp(line, "quit", 4) == 0 || strncmp(line, "exit", 4) == 0)
			break;
		rc = run_line(r, line, stdout);
	}
	free(line);
	if (tty)
		printf("\n");
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cmd", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = NULL;
	struct runner *r;
	pid_t pid = 0;
	char *end;
	long v;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+c:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cmd = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return FP_OK;
		case 'V':
			printf("flight_profiler %s\n", PACKAGE_VERSION);
			return FP_OK;
		default:
			fputs(usage_text, stderr);
			return FP_EUSAGE;
		}
	}
	if (optind < argc) {
		errno = 0;
		v = strtol(argv[optind], &end, 10);
		if (errno != 0 || *end != '\0' || v <= 0 || v > 0x3fffffff) {
			fprintf(stderr, "flight_profiler: '%s' is not a process id\n", argv[optind]);
			return FP_EUSAGE;
		}
		pid = (pid_t)v;
		optind++;
	}
	/* Allow the PID before or after --cmd. */
	if (optind < argc && cmd == NULL) {
		while ((c = getopt_long(argc, argv, "+c:hV", longopts, NULL)) != -1)
			if (c == 'c')
				cmd = optarg;
	}
	if (optind < argc) {
		fprintf(stderr, "flight_profiler: unexpected argument '%s'\n", argv[optind]);
		return FP_EUSAGE;
	}
	if (pid == 0 && cmd == NULL) {
		fputs(usage_text, stderr);
		return FP_EUSAGE;
	}

	install_signal_handlers();
	r = runner_new(pid);
	if (cmd != NULL)
		rc = run_line(r, cmd, stdout);
	else
		rc = prompt_loop(r, pid);
	runner_free(r);
	return rc;
}
