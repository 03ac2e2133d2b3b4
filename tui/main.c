/*
 * flight_profiler — attach to a live CPython process.
 *
 *   flight_profiler PID --cmd "stack --native"   one command, plain text
 *   flight_profiler PID                          the TUI on a terminal;
 *                                                a line-mode prompt when
 *                                                stdout is not a terminal
 *                                                or TERM=dumb
 *
 * main() is the only place that exits; everything below returns a status.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/pystack.h"
#include "core/runner.h"
#include "core/termsafe.h"
#include "core/util.h"
#include "tui/linemode.h"
#include "tui/termguard.h"
#include "tui/tui.h"

static const char usage_text[] =
"usage: flight_profiler [options] PID\n"
"       flight_profiler [options] PID --cmd COMMAND\n"
"       flight_profiler --cmd 'stack PID'\n"
"\n"
"Attach to a running CPython 3.8+ process to look inside it without\n"
"restarting it.  On a terminal, open the full-screen view (threads, stacks,\n"
"source; `?` lists the keys, `:` takes commands).  With --cmd, run one\n"
"command, print plain text and exit with its status.  When standard output\n"
"is not a terminal or TERM=dumb, read commands at a prompt, one per line\n"
"(`help` lists them; Ctrl-C cancels a command, Ctrl-D leaves).\n"
"\n"
"options:\n"
"  -c, --cmd COMMAND   run COMMAND (e.g. \"stack --native\") and exit\n"
"  -d, --delay SECS    refresh the screen every SECS seconds (default 1)\n"
"      --theme NAME    colour theme: default, light, monochrome,\n"
"                      high-contrast, a user theme or a file path\n"
"  -h, --help          show this help\n"
"  -V, --version       show the version\n"
"\n"
"environment:\n"
"  NO_COLOR            no colours (attributes only)\n"
"  XDG_CONFIG_HOME     user themes in $XDG_CONFIG_HOME/flight_profiler/themes\n"
"  XDG_STATE_HOME      command history in $XDG_STATE_HOME/flight_profiler\n"
"  FLIGHT_PROFILER_THEME_PATH  more theme directories, colon-separated\n"
"\n"
"exit status:\n"
"  0  success\n"
"  1  other error (the message says what happened)\n"
"  2  usage error: bad option, command or argument\n"
"  3  no such process\n"
"  4  permission denied (another user's process, ptrace restrictions,\n"
"     a missing CAP_SYS_PTRACE in a container, or the agent's place\n"
"     taken by another user: the agent is refused, never impersonated)\n"
"  5  not a Python process\n"
"  6  unsupported or unknown Python version\n"
"  7  the process exited while being read\n";

/* The full-screen TUI needs a real terminal on both ends. */
static bool
want_tui(void)
{
	const char *term = getenv("TERM");

	return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && term != NULL &&
	    *term != '\0' && strcmp(term, "dumb") != 0;
}

static int
run_tui(pid_t pid, double delay, const char *theme)
{
	struct tui_options opts = { .delay = delay, .theme = theme };
	struct py_reader *reader = NULL;
	const char *nc = getenv("NO_COLOR");
	char *cause = NULL;
	int rc;

	opts.no_color = nc != NULL && *nc != '\0';
	if ((rc = py_reader_open(pid, &reader, &cause)) != FP_OK) {
		termsafe_error(stderr, cause ? cause : "cannot read the process");
		free(cause);
		return rc;
	}
	return tui_run(pid, reader, &opts);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cmd", required_argument, NULL, 'c' },
		{ "delay", required_argument, NULL, 'd' },
		{ "theme", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = NULL, *theme = NULL;
	double delay = 1.0;
	struct runner *r;
	pid_t pid = 0;
	char *end;
	long v;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+c:d:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cmd = optarg;
			break;
		case 'd':
			errno = 0;
			delay = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' || !(delay >= 0.1 && delay <= 3600)) {
				fprintf(stderr, "flight_profiler: -d wants seconds from 0.1 to 3600, not '%s'\n",
				    optarg);
				return FP_EUSAGE;
			}
			break;
		case 'T':
			theme = optarg;
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
	/* Allow the PID before or after the options. */
	if (optind < argc) {
		while ((c = getopt_long(argc, argv, "+c:d:hV", longopts, NULL)) != -1) {
			if (c == 'c' && cmd == NULL) {
				cmd = optarg;
			} else if (c == 'd') {
				errno = 0;
				delay = strtod(optarg, &end);
				if (errno != 0 || end == optarg || *end != '\0' ||
				    !(delay >= 0.1 && delay <= 3600)) {
					fprintf(stderr, "flight_profiler: -d wants seconds from 0.1 to 3600, "
					    "not '%s'\n", optarg);
					return FP_EUSAGE;
				}
			} else if (c == 'T') {
				theme = optarg;
			} else if (c == 'h') {
				fputs(usage_text, stdout);
				return FP_OK;
			} else if (c == 'V') {
				printf("flight_profiler %s\n", PACKAGE_VERSION);
				return FP_OK;
			} else if (c != 'c') {
				fputs(usage_text, stderr);
				return FP_EUSAGE;
			}
		}
	}
	if (optind < argc) {
		fprintf(stderr, "flight_profiler: unexpected argument '%s'\n", argv[optind]);
		return FP_EUSAGE;
	}
	if (pid == 0 && cmd == NULL) {
		fputs(usage_text, stderr);
		return FP_EUSAGE;
	}

	guard_install();
	if (cmd != NULL) {
		r = runner_new(pid);
		rc = linemode_exec(r, cmd);
		runner_free(r);
		return rc;
	}
	/* Wide characters for the screen and the line editor; numbers stay C. */
	setlocale(LC_CTYPE, "");
	if (want_tui())
		return run_tui(pid, delay, theme);
	r = runner_new(pid);
	rc = linemode_run(r, pid);
	runner_free(r);
	return rc;
}
