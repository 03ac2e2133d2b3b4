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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hosts.h"
#include "core/jsonout.h"
#include "core/pystack.h"
#include "core/runner.h"
#include "core/procset.h"
#include "core/termsafe.h"
#include "core/util.h"
#include "inject/loader.h"
#include "tui/linemode.h"
#include "tui/termguard.h"
#include "tui/tui.h"

static const char usage_text[] =
"usage: flight_profiler [options] PID\n"
"       flight_profiler [options] PID --cmd COMMAND\n"
"       flight_profiler --cmd 'stack PID'\n"
"       flight_profiler PID,PID,... | PID --tree | --match REGEX  --cmd 'stack --group'\n"
"       flight_profiler PID,PID,... | PID --tree | --match REGEX\n"
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
"      --tree          the process set of PID and every descendant\n"
"      --match REGEX   the process set of every command line matching REGEX\n"
"                      (a set, or PID,PID,..., runs `stack` with --cmd:\n"
"                      --group merges identical stacks across processes)\n"
"                      (without --cmd: the TUI with a processes pane)\n"
"      --json          with --cmd: one JSON record per line (stack, getglobal,\n"
"                      vmtool, execute, module, mem summary; man page)\n"
"      --hosts H1,H2   with --cmd: run `stack` on each host over ssh, in\n"
"                      parallel, and group across hosts (--group)\n"
"      --ssh CMD       the ssh command for --hosts (default: $FP_SSH or ssh)\n"
"      --remote-binary PATH  flight_profiler on the hosts (default:\n"
"                      $FP_REMOTE_BINARY or flight_profiler)\n"
"      --ssh-timeout SECS  give a host up after SECS (default 60)\n"
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
"  7  the process exited while being read (or is a zombie)\n";

/* The full-screen TUI needs a real terminal on both ends. */
static bool
want_tui(void)
{
	const char *term = getenv("TERM");

	return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && term != NULL &&
	    *term != '\0' && strcmp(term, "dumb") != 0;
}

/*
 * The first member of the set that is Python, with its reader: the
 * process the TUI looks at first.  Returns an fp_status with *cause.
 */
static int
first_python(const struct proc_set_spec *spec, pid_t *pid, struct py_reader **reader, char **cause)
{
	struct proc_set set = { 0 };
	size_t i;
	int rc;

	if ((rc = procset_resolve(spec, &set, cause)) != FP_OK)
		return rc;
	rc = fail(cause, FP_ENOTPY, "no process of the set is Python (--cmd stack says why)");
	for (i = 0; i < set.n && rc != FP_OK; i++) {
		if (py_reader_open(set.m[i].pid, reader, NULL) == FP_OK) {
			*pid = set.m[i].pid;
			free(*cause);
			*cause = NULL;
			rc = FP_OK;
		}
	}
	procset_clear(&set);
	return rc;
}

static int
run_tui(pid_t pid, const struct proc_set_spec *set, double delay, const char *theme)
{
	struct tui_options opts = { .delay = delay, .theme = theme };
	struct py_reader *reader = NULL;
	const char *nc = getenv("NO_COLOR");
	char *cause = NULL;
	int rc;

	opts.no_color = nc != NULL && *nc != '\0';
	if (procset_is_set(set))
		opts.set = set;
	if ((rc = opts.set ? first_python(set, &pid, &reader, &cause) :
	    py_reader_open(pid, &reader, &cause)) != FP_OK) {
		termsafe_error(stderr, cause ? cause : "cannot read the process");
		free(cause);
		return rc;
	}
	return tui_run(pid, reader, &opts);
}

/* A bad command line: one line and where to read more (--help has the rest). */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("flight_profiler: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (try flight_profiler --help)\n", stderr);
	return FP_EUSAGE;
}

/* The option getopt stopped at, as typed: "-x", or "--name" without its "=value". */
static const char *
option_name(char **argv, char *shortopt)
{
	static char longopt[64];
	const char *word = argv[optind - 1];

	if (optopt != 0 && strncmp(word, "--", 2) != 0) {
		shortopt[1] = (char)optopt;
		return shortopt;
	}
	snprintf(longopt, sizeof longopt, "%.*s", (int)strcspn(word, "="), word);
	return longopt;
}

struct options {
	const char *cmd, *theme, *match;
	double delay;
	bool tree;
	bool json;
	struct hosts_opts hosts;	/* --hosts and its options */
};

/*
 * Parse options up to the first word that is not one; the PID may come
 * before or after them.  Returns FP_OK to go on, -1 when --help or
 * --version answered, or FP_EUSAGE after saying what is wrong.
 */
static int
parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "cmd", required_argument, NULL, 'c' },
		{ "delay", required_argument, NULL, 'd' },
		{ "theme", required_argument, NULL, 'T' },
		{ "tree", no_argument, NULL, 't' },
		{ "match", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'J' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "ssh", required_argument, NULL, 'S' },
		{ "remote-binary", required_argument, NULL, 'R' },
		{ "ssh-timeout", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char *end, *cause = NULL, shortopt[3] = "-?";
	int c;

	opterr = 0;	/* getopt's own messages carry argv[0], a full path */
	while ((c = getopt_long(argc, argv, "+:c:d:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (o->cmd == NULL)
				o->cmd = optarg;
			break;
		case 'd':
			errno = 0;
			o->delay = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    !(o->delay >= 0.1 && o->delay <= 3600))
				return usage_error("-d wants seconds from 0.1 to 3600, not '%s'", optarg);
			break;
		case 'T':
			o->theme = optarg;
			break;
		case 't':
			o->tree = true;
			break;
		case 'm':
			if (*optarg == '\0')
				return usage_error("--match: the pattern is empty");
			o->match = optarg;
			break;
		case 'J':
			o->json = true;
			break;
		case 'H': case 'S': case 'R': case 'O':
			if (hosts_option(&o->hosts, c == 'H' ? "--hosts" : c == 'S' ? "--ssh" :
			    c == 'R' ? "--remote-binary" : "--ssh-timeout", optarg, &cause) != FP_OK) {
				c = usage_error("%s", cause);
				free(cause);
				return c;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case 'V':
			printf("flight_profiler %s\n", PACKAGE_VERSION);
			return -1;
		case ':':
			return usage_error("option %s needs a value", option_name(argv, shortopt));
		default:
			return usage_error("unknown option %s", option_name(argv, shortopt));
		}
	}
	return FP_OK;
}

/*
 * Options, the PID (or a list of them) before or after them, and what
 * they say together.  Returns FP_OK to go on, -1 when --help or --version
 * answered, or FP_EUSAGE after saying what is wrong.
 */
static int
parse_command_line(int argc, char **argv, struct options *o, struct proc_set_spec *set,
    pid_t *pid)
{
	char *cause = NULL;
	int rc;

	if ((rc = parse_options(argc, argv, o)) != FP_OK)
		return rc;
	if (optind < argc) {
		if (procset_parse_pids(set, argv[optind], &cause) != FP_OK) {
			termsafe_error(stderr, cause);
			free(cause);
			return FP_EUSAGE;
		}
		*pid = set->pids[0];
		optind++;
	}
	/* Allow the PID before or after the options. */
	if (optind < argc && (rc = parse_options(argc, argv, o)) != FP_OK)
		return rc;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (*pid == 0 && o->cmd == NULL && o->match == NULL && o->hosts.hosts == NULL)
		return usage_error("no process given: flight_profiler PID");
	if (o->tree && *pid == 0)
		return usage_error("--tree needs the PID at its root");
	set->tree = o->tree;
	set->match = o->match ? xstrdup(o->match) : NULL;
	if ((o->json || o->hosts.hosts != NULL) && o->cmd == NULL)
		return usage_error("--json and --hosts go with --cmd");
	if ((o->hosts.ssh || o->hosts.remote || o->hosts.timeout > 0) && o->hosts.hosts == NULL)
		return usage_error("--ssh, --remote-binary and --ssh-timeout go with --hosts");
	/* An empty --cmd (a variable that was not set, say) is a mistake, not a no-op. */
	if (o->cmd != NULL && o->cmd[strspn(o->cmd, " \t\r\n")] == '\0')
		return usage_error("--cmd: the command is empty");
	return FP_OK;
}

int
main(int argc, char **argv)
{
	struct options o = { .delay = 1.0 };
	struct proc_set_spec set = { 0 };
	struct runner *r;
	pid_t pid = 0;
	int rc;

	/* The one place the layers meet: core/ loads the agent with inject/. */
	attach_set_loader(&inject_loader);
	if ((rc = parse_command_line(argc, argv, &o, &set, &pid)) != FP_OK) {
		procset_spec_clear(&set);
		hosts_opts_clear(&o.hosts);
		return rc < 0 ? FP_OK : rc;
	}

	guard_install();
	if (o.hosts.hosts != NULL) {
		o.hosts.json = o.json;
		rc = hosts_main(&o.hosts, &set, o.cmd);
		procset_spec_clear(&set);
		hosts_opts_clear(&o.hosts);
		return rc;
	}
	if (o.cmd != NULL) {
		r = runner_new(procset_is_set(&set) ? 0 : pid);
		if (procset_is_set(&set))
			runner_set_procset(r, &set);
		procset_spec_clear(&set);
		runner_set_one_shot(r);
		rc = o.json ? jsonout_main(r, o.cmd) : linemode_exec(r, o.cmd);
		runner_free(r);
		return rc;
	}
	/* Wide characters for the screen and the line editor; numbers stay C. */
	setlocale(LC_CTYPE, "");
	if (want_tui()) {
		rc = run_tui(pid, &set, o.delay, o.theme);
		procset_spec_clear(&set);
		return rc;
	}
	if (procset_is_set(&set)) {
		procset_spec_clear(&set);
		return usage_error("a process set (--tree, --match, PID,PID) works with --cmd, "
		    "or in the TUI on a terminal");
	}
	procset_spec_clear(&set);
	r = runner_new(pid);
	rc = linemode_run(r, pid);
	runner_free(r);
	return rc;
}
