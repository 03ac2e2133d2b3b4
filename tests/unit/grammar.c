/*
 * grammar — every command and option of the command guide (seeds/002) as
 * this build answers it: the accepted forms with what they parse to, the
 * rejected forms with their exact message.  The safety net for moving the
 * grammar into one command table.
 *
 * Three layers, each through its public API: command_split (words and
 * quotes), command_parse (commands, options, counts of arguments) and
 * runner_exec (what the runner checks: numbers and their bounds, actions,
 * missing parts).  The runner here has no process (pid 0): a form that
 * passes every check ends at "no process given" before anything could
 * touch a target, so nothing here starts or reads a process.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/command.h"
#include "core/runner.h"
#include "core/util.h"
#include "tests/unit/tap.h"
#include "tui/cmdline.h"

/* What a runner without a process answers once a line passed every check. */
#define NO_PROCESS "no process given: flight_profiler PID --cmd ..."
#define STACK_NO_PROCESS "stack: no process given (flight_profiler PID, or stack PID)"

#define STACK_USAGE "(usage: stack [pid] [-f FILE] [--native] [--block] [-a] [--locals] [--group[=function]])"
#define GETGLOBAL_USAGE "(usage: getglobal module [class] field [-x N] [-e EXPR] [-r] [-v] [--all])"
#define VMTOOL_USAGE "(usage: vmtool -a getInstances -c module class [-e EXPR] [-x N] " \
	"[-n N] [-r] [-v] | -a forceGc [--all])"
#define EXECUTE_USAGE "(usage: execute FILE | CODE... [-t SECONDS] [--all])"

static struct runner *nowhere;	/* pid 0 */
static struct runner *far;	/* a pid that cannot exist (above any pid_max) */

/* ---- helpers ------------------------------------------------------------- */

/* A request as one line: "name(arg, arg) --long=value --flag". */
static char *
shape(const struct cmd_request *req)
{
	struct sbuf s = { 0 };
	size_t i;

	sbuf_addf(&s, "%s(", req->spec->name);
	for (i = 0; i < req->nargs; i++)
		sbuf_addf(&s, "%s%s", i ? ", " : "", req->args[i]);
	sbuf_add(&s, ")");
	for (i = 0; i < req->nopts; i++) {
		sbuf_addf(&s, " %s", req->opts[i].opt->longname);
		if (req->opts[i].value != NULL)
			sbuf_addf(&s, "=%s", req->opts[i].value);
	}
	return sbuf_steal(&s);
}

/* A line for a test's name, in ASCII: other bytes as C escapes. */
static char *
shown(const char *line)
{
	struct sbuf s = { 0 };
	const unsigned char *p;

	sbuf_add(&s, "");
	for (p = (const unsigned char *)line; *p != '\0'; p++) {
		if (*p == '\n')
			sbuf_add(&s, "\\n");
		else if (*p == '\r')
			sbuf_add(&s, "\\r");
		else if (*p == '\t')
			sbuf_add(&s, "\\t");
		else if (*p < 0x20 || *p >= 0x7f)
			sbuf_addf(&s, "\\x%02x", *p);
		else
			sbuf_addn(&s, (const char *)p, 1);
	}
	return sbuf_steal(&s);
}

/* command_split gives these words, joined by '|'. */
static void
splits(const char *line, const char *want)
{
	struct sbuf s = { 0 };
	char **words, *cause = NULL, *name = shown(line);
	size_t n, i;

	if (command_split(line, &words, &n, &cause) != FP_OK) {
		ok(0, "split [%s]", name);
		diag("  cause: %s", cause);
		free(cause);
		free(name);
		return;
	}
	sbuf_add(&s, "");
	for (i = 0; i < n; i++)
		sbuf_addf(&s, "%s%s", i ? "|" : "", words[i]);
	is_str(s.s, want, "split [%s]", name);
	strv_free(words, n);
	sbuf_free(&s);
	free(name);
}

/* command_parse accepts the line as `want` (see shape()). */
static void
parses(const char *line, const char *want)
{
	struct cmd_request *req = NULL;
	char *cause = NULL, *got;

	if (command_parse(line, &req, &cause) != FP_OK || req == NULL) {
		ok(0, "parses [%s]", line);
		diag("  cause: %s", cause ? cause : "(none; empty request)");
		free(cause);
		command_request_free(req);
		return;
	}
	got = shape(req);
	is_str(got, want, "parses [%s]", line);
	free(got);
	command_request_free(req);
}

/* command_parse refuses the line as a usage error with exactly `msg`. */
static void
parse_fails(const char *line, const char *msg)
{
	struct cmd_request *req = NULL;
	char *cause = NULL, *name = shown(line);
	int rc = command_parse(line, &req, &cause);

	if (!ok(rc == FP_EUSAGE && req == NULL && cause != NULL && strcmp(cause, msg) == 0,
	    "refused by the parser [%s]", name)) {
		diag("  rc %d, got: '%s'", rc, cause ? cause : "(null)");
		diag(" want: '%s'", msg);
	}
	free(name);
	free(cause);
	command_request_free(req);
}

/* runner_exec on `r`: status and message. */
static int
run(struct runner *r, const char *line, char **cause)
{
	struct sbuf out = { 0 };
	int rc;

	*cause = NULL;
	rc = runner_exec(r, line, &out, cause);
	sbuf_free(&out);
	return rc;
}

/* The runner finds nothing wrong with the line: only the process is missing. */
static void
passes(const char *line)
{
	const char *want = strncmp(line, "stack", 5) == 0 ? STACK_NO_PROCESS : NO_PROCESS;
	char *cause;
	int rc = run(nowhere, line, &cause);

	if (!ok(rc == FP_EUSAGE && cause != NULL && strcmp(cause, want) == 0, "accepted [%s]", line))
		diag("  rc %d, got: '%s'", rc, cause ? cause : "(null)");
	free(cause);
}

/* The runner refuses the line as a usage error with exactly `msg`. */
static void
refused_by(struct runner *r, const char *line, const char *msg)
{
	char *cause, *name = shown(line);
	int rc = run(r, line, &cause);

	if (!ok(rc == FP_EUSAGE && cause != NULL && strcmp(cause, msg) == 0, "refused [%s]", name)) {
		diag("  rc %d, got: '%s'", rc, cause ? cause : "(null)");
		diag(" want: '%s'", msg);
	}
	free(name);
	free(cause);
}

static void
refused(const char *line, const char *msg)
{
	refused_by(nowhere, line, msg);
}

/* ---- words and quotes ------------------------------------------------------ */

static void
test_split(void)
{
	splits("stack", "stack");
	splits("  stack \t --native  ", "stack|--native");
	splits("stack\n-f\rx", "stack|-f|x");
	splits("", "");
	splits(" \t ", "");
	/* The guide's expressions: quoted, they are one word, quotes gone. */
	splits("getglobal m f --expr 'args[0]'", "getglobal|m|f|--expr|args[0]");
	splits("watch m f -f 'cost > 10'", "watch|m|f|-f|cost > 10");
	splits("watch __main__ func -f \"args[0][\\\"query\\\"]=='hello'\"",
	    "watch|__main__|func|-f|args[0][\"query\"]=='hello'");
	splits("watch __main__ func --expr \"{return_obj,args}\" -f \"cost>10\"",
	    "watch|__main__|func|--expr|{return_obj,args}|-f|cost>10");
	splits("getglobal m f -e 'target[\"a b\"]'", "getglobal|m|f|-e|target[\"a b\"]");
	/* Shell rules: adjacent parts join, '' is an empty word, \ escapes. */
	splits("a\"b c\"d", "ab cd");
	splits("'it'\\''s'", "it's");
	splits("a\\ b", "a b");
	splits("'a\\b'", "a\\b");
	splits("\"a\\b\"", "a\\b");
	splits("\"a\\\"b\\\\\"", "a\"b\\");
	splits("x '' y", "x||y");
	splits("x \"\"", "x|");
	splits("a\\", "a\\");
}

static void
test_split_errors(void)
{
	parse_fails("'", "unterminated ' quote");
	parse_fails("\"", "unterminated \" quote");
	parse_fails("stack -f 'x.log", "unterminated ' quote");
	parse_fails("getglobal m f -e \"target[0]", "unterminated \" quote");
	parse_fails("watch m f -f 'cost > 10", "unterminated ' quote");
	parse_fails("getglobal m f -e \"a\\\"", "unterminated \" quote");
	refused("vmtool -a 'forceGc", "unterminated ' quote");
}

/* ---- empty line, unknown commands ------------------------------------------ */

static void
test_empty_and_unknown(void)
{
	struct cmd_request *req = (struct cmd_request *)1;
	char *cause = NULL;
	int rc;

	rc = command_parse("", &req, &cause);
	ok(rc == FP_OK && req == NULL && cause == NULL, "an empty line is no request and no error");
	req = (struct cmd_request *)1;
	rc = command_parse(" \t\n", &req, &cause);
	ok(rc == FP_OK && req == NULL && cause == NULL, "a blank line is no request and no error");
	/* `--cmd ""` is refused by main (tests/integration/test_errors.py); the
	 * runner itself runs nothing and says nothing for a blank line. */
	rc = run(nowhere, "   ", &cause);
	ok(rc == FP_OK && cause == NULL, "the runner runs nothing for a blank line");

	parse_fails("stak", "unknown command 'stak': did you mean 'stack'? (`help` lists commands)");
	parse_fails("Stack", "unknown command 'Stack': did you mean 'stack'? (`help` lists commands)");
	parse_fails("getglobl m f", "unknown command 'getglobl': did you mean 'getglobal'? "
	    "(`help` lists commands)");
	parse_fails("vmtol -a forceGc", "unknown command 'vmtol': did you mean 'vmtool'? "
	    "(`help` lists commands)");
	parse_fails("hepl", "unknown command 'hepl': did you mean 'help'? (`help` lists commands)");
	parse_fails("sta", "unknown command 'sta': did you mean 'stack'? (`help` lists commands)");
	parse_fails("x", "unknown command 'x' (`help` lists commands)");
	parse_fails("ab", "unknown command 'ab' (`help` lists commands)");
	parse_fails("frobnicate", "unknown command 'frobnicate' (`help` lists commands)");
	parse_fails("-f x", "unknown command '-f' (`help` lists commands)");
	parse_fails("'' stack", "unknown command '' (`help` lists commands)");
}

/* ---- help ---------------------------------------------------------------- */

static void
test_help(void)
{
	static const char *const built[] = {
		"help", "stack", "perf", "gilstat", "getglobal", "vmtool", "module", "console",
		"execute", "mem", "watch", "torch",
		"trace", "monitor", "reset", "tt",
	};
	static const char *const tui[] = { "quit", "save", "theme", "delay", "flame" };
	const struct cmd_spec *const *all;
	struct sbuf out = { 0 };
	char *cause = NULL, *line;
	const char *at, *tui_at;
	size_t i, k, nall;
	int rc;

	parses("help", "help()");
	parses("help stack", "help(stack)");
	parses("help watch", "help(watch)");
	parses("help save", "help(save)");
	parse_fails("help stack vmtool", "help: expected at most 1 argument, got 2 "
	    "(usage: help [command])");
	parse_fails("help -x", "help: unknown option '-x' (usage: help [command])");
	refused("help nope", "unknown command 'nope' (`help` lists commands)");
	refused("help stak", "unknown command 'stak': did you mean 'stack'? (`help` lists commands)");

	/* Every command a user can type is listed, in its section. */
	rc = command_help(&out, NULL, &cause);
	ok(rc == FP_OK && out.s != NULL, "help lists the commands");
	tui_at = strstr(out.s, "\nIn the TUI too:\n");
	ok(tui_at != NULL && strstr(out.s, "not in this build") == NULL,
	    "help has a section for the TUI's own commands, and none for commands to come: "
	    "every command of the guide is built");
	for (i = 0; i < FP_NELEM(built); i++) {
		line = xasprintf("\n  %-10s ", built[i]);
		at = strstr(out.s, line);
		ok(at != NULL && (tui_at == NULL || at < tui_at), "help lists %s", built[i]);
		free(line);
	}
	for (i = 0; i < FP_NELEM(tui); i++) {
		line = xasprintf("\n  %-10s ", tui[i]);
		at = strstr(out.s, line);
		ok(at != NULL && at > tui_at, "help lists %s with the TUI's own",
		    tui[i]);
		free(line);
	}
	/* ... and nothing else: the table is what help lists. */
	all = command_all(&nall);
	ok(nall == FP_NELEM(built) + FP_NELEM(tui),
	    "the table has the %zu commands help lists", nall);
	sbuf_free(&out);

	/* Every command's help shows its usage, every argument and every option. */
	for (i = 0; i < nall; i++) {
		const struct cmd_spec *spec = all[i];
		bool every = true;

		rc = command_help(&out, spec->name, &cause);
		line = xasprintf("USAGE\n  %s%s%s\n\n", spec->name, spec->usage[0] ? " " : "",
		    spec->usage);
		ok(rc == FP_OK && out.s != NULL && strncmp(out.s, line, strlen(line)) == 0,
		    "help %s starts with its usage, no space after it", spec->name);
		free(line);
		for (k = 0; k < spec->nsubs; k++)
			if (strstr(out.s, spec->subs[k]->usage) == NULL)
				every = false;
		for (k = 0; k < spec->noptions; k++) {
			const struct cmd_option *o = &spec->options[k];

			if (strstr(out.s, o->longname) == NULL ||
			    (o->shortname != NULL && strstr(out.s, o->shortname) == NULL) ||
			    (o->arg != NULL && strstr(out.s, o->arg) == NULL))
				every = false;
		}
		for (k = 0; k < spec->nparams; k++)
			if (strstr(out.s, spec->params[k].name) == NULL)
				every = false;
		ok(every, "help %s shows each argument, option and subcommand", spec->name);
		sbuf_free(&out);
	}

	/* The guide's defaults and bounds are said where the options are. */
	command_help(&out, "getglobal", &cause);
	ok(strstr(out.s, "-x, --expand N") != NULL && strstr(out.s, "(default 1)") != NULL,
	    "help getglobal: -x defaults to 1 (the guide's)");
	sbuf_free(&out);
	command_help(&out, "vmtool", &cause);
	ok(strstr(out.s, "-n, --limits N") != NULL && strstr(out.s, "-1 for all (default 10)") != NULL,
	    "help vmtool: -n defaults to 10, -1 for all (the guide's)");
	ok(strstr(out.s, "(one of getInstances, forceGc)") != NULL, "help vmtool names both actions");
	sbuf_free(&out);
	command_help(&out, "tt", &cause);
	ok(strstr(out.s, "stop after N records (default 50)") != NULL,
	    "help tt: -n defaults to 50 (the guide's)");
	ok(strstr(out.s, "this build does not have") == NULL &&
	    strstr(out.s, "at most N records, the oldest evicted first (default 1000)") != NULL &&
	    strstr(out.s, "(default 64)") != NULL,
	    "help tt: built, with the store's bounds and their defaults");
	sbuf_free(&out);
	command_help(&out, "perf", &cause);
	ok(strstr(out.s, "(default flamegraph.svg)") != NULL && strstr(out.s, "(default 100)") != NULL,
	    "help perf: flamegraph.svg at 100 Hz by default (the guide's)");
	sbuf_free(&out);
	command_help(&out, "save", &cause);
	ok(strncmp(out.s, "USAGE\n  save FILE [--format FORMAT]\n", 36) == 0 &&
	    strstr(out.s, "(in the full-screen view only)") != NULL, "help save: its usage, TUI only");
	sbuf_free(&out);
	command_help(&out, "quit", &cause);
	ok(strstr(out.s, "(in the full-screen view and the line-mode prompt only)") != NULL,
	    "help quit: in the TUI and the line-mode prompt");
	sbuf_free(&out);
	command_help(&out, "mem", &cause);
	ok(strstr(out.s, "USAGE\n  mem summary [--limit N]") != NULL &&
	    strstr(out.s, "USAGE\n  mem diff [--interval SECONDS]") != NULL &&
	    strstr(out.s, "(one of descending, ascending; default descending)") != NULL,
	    "help mem shows each subcommand and --order's choices");
	sbuf_free(&out);
	free(cause);
}

/* ---- stack [pid] [-f FILE] [--native] [--block] [-a] [--locals] ------------ */

static void
test_stack(void)
{
	parses("stack", "stack()");
	parses("stack 3303", "stack(3303)");
	parses("stack -f /home/admin/stack.log", "stack() --filepath=/home/admin/stack.log");
	parses("stack --filepath ./stack.log", "stack() --filepath=./stack.log");
	parses("stack --filepath=./stack.log", "stack() --filepath=./stack.log");
	parses("stack -f 'my stack.log'", "stack() --filepath=my stack.log");
	parses("stack --native", "stack() --native");
	parses("stack --block", "stack() --block");
	parses("stack -a", "stack() --asyncio");
	parses("stack --asyncio", "stack() --asyncio");
	parses("stack --locals", "stack() --locals");
	parses("stack 3303 --native -f s.log --block -a --locals",
	    "stack(3303) --native --filepath=s.log --block --asyncio --locals");
	parses("stack --native 3303", "stack(3303) --native");
	parses("stack -- 3303", "stack(3303)");
	/* A value may start with '-': it belongs to the option. */
	parses("stack -f -x.log", "stack() --filepath=-x.log");

	/* Every option passes the runner's checks. */
	passes("stack");
	passes("stack --native");
	passes("stack --block --native");
	passes("stack -a --locals");
	passes("stack -f s.log");
	passes("stack --filepath=s.log --native --block -a --locals");

	/* pid: a positive number up to 0x3fffffff (the kernel's PID_MAX_LIMIT is 2^22). */
	refused("stack 0", "stack: '0' is not a process id");
	refused("stack -5", "stack: '-5' is not a process id");
	refused("stack 1073741824", "stack: '1073741824' is not a process id");
	refused("stack 99999999999999999999", "stack: '99999999999999999999' is not a process id");
	refused("stack 12abc", "stack: '12abc' is not a process id");
	refused("stack 0x10", "stack: '0x10' is not a process id");
	refused("stack -", "stack: '-' is not a process id");
	refused("stack ''", "stack: '' is not a process id (to write the stacks to a file: "
	    "stack -f FILE)");
	/* The guide's macOS form, stack [filepath]. */
	refused("stack ./stack.log", "stack: './stack.log' is not a process id (to write the "
	    "stacks to a file: stack -f FILE)");
	refused("stack /home/admin/stack.log", "stack: '/home/admin/stack.log' is not a process id "
	    "(to write the stacks to a file: stack -f FILE)");

	parse_fails("stack 1 2", "stack: expected at most 1 argument, got 2 " STACK_USAGE);
	parse_fails("stack -f", "stack: option -f needs a value (FILE)");
	parse_fails("stack --native -f", "stack: option -f needs a value (FILE)");
	parse_fails("stack --filepath", "stack: option --filepath needs a value (FILE)");
	parse_fails("stack --nativ", "stack: unknown option '--nativ': did you mean '--native'? "
	    STACK_USAGE);
	parse_fails("stack --Native", "stack: unknown option '--Native': did you mean '--native'? "
	    STACK_USAGE);
	parse_fails("stack --filpath x", "stack: unknown option '--filpath': did you mean "
	    "'--filepath'? " STACK_USAGE);
	/* A flag is a flag: --native=yes is not --native, nor an unknown option. */
	parse_fails("stack --native=yes", "stack: option --native takes no value " STACK_USAGE);
	parse_fails("stack --block=", "stack: option --block takes no value " STACK_USAGE);
	parse_fails("stack --locals=1", "stack: option --locals takes no value " STACK_USAGE);
	parse_fails("stack --asyncio-tasks", "stack: unknown option '--asyncio-tasks' " STACK_USAGE);
	/* A short option of another command is not a typo of one of these. */
	parse_fails("stack -n 5", "stack: unknown option '-n' " STACK_USAGE);
	parse_fails("stack -z", "stack: unknown option '-z' " STACK_USAGE);
	parse_fails("stack -ff x", "stack: unknown option '-ff' " STACK_USAGE);
	parse_fails("stack -F x", "stack: unknown option '-F': did you mean '-f'? " STACK_USAGE);
	parse_fails("stack -native", "stack: unknown option '-native': did you mean '--native'? "
	    STACK_USAGE);
	parse_fails("stack --expr x", "stack: unknown option '--expr' " STACK_USAGE);
	/* An empty file name: the option was given, the file was not. */
	refused_by(far, "stack -f ''", "stack: -f needs a file name");
	refused_by(far, "stack --filepath=", "stack: -f needs a file name");
}

/* ---- getglobal module [class] field [-x N] [-e EXPR] [-r] [-v] ------------ */

static void
test_getglobal(void)
{
	parses("getglobal __main__ g_list", "getglobal(__main__, g_list)");
	parses("getglobal __main__ classA static_field", "getglobal(__main__, classA, static_field)");
	parses("getglobal my.pkg.modulename Outer.Inner f", "getglobal(my.pkg.modulename, Outer.Inner, f)");
	parses("getglobal m f -e target.fieldA", "getglobal(m, f) --expr=target.fieldA");
	parses("getglobal m f --all", "getglobal(m, f) --all");
	passes("getglobal m f --all");
	parses("getglobal m f --expr 'target[\"k\"]'", "getglobal(m, f) --expr=target[\"k\"]");
	parses("getglobal m f --expr='args[0]'", "getglobal(m, f) --expr=args[0]");
	parses("getglobal m f -x 2", "getglobal(m, f) --expand=2");
	parses("getglobal m f --expand 4", "getglobal(m, f) --expand=4");
	parses("getglobal m f --expand=3", "getglobal(m, f) --expand=3");
	parses("getglobal m f -r", "getglobal(m, f) --raw");
	parses("getglobal m f --raw", "getglobal(m, f) --raw");
	parses("getglobal m f -v", "getglobal(m, f) --verbose");
	parses("getglobal m f --verbose", "getglobal(m, f) --verbose");
	parses("getglobal -x 2 -r m C f -v -e 'len(target)'",
	    "getglobal(m, C, f) --expand=2 --raw --verbose --expr=len(target)");
	parses("getglobal m f -e -x", "getglobal(m, f) --expr=-x");

	passes("getglobal __main__ g_list");
	passes("getglobal __main__ classA static_field");
	passes("getglobal m f -e target.fieldA -x 2 -r -v");
	passes("getglobal m f -e 'target[0] if target else None'");
	/* -x: 1 by default, 0 to 4 (the guide: "最大为4"). */
	passes("getglobal m f -x 0");
	passes("getglobal m f -x 4");
	passes("getglobal m f -x 1 -x 3");
	refused("getglobal m f -x 5", "getglobal: -x wants a depth from 0 to 4, not '5'");
	refused("getglobal m f -x -1", "getglobal: -x wants a depth from 0 to 4, not '-1'");
	refused("getglobal m f --expand=100", "getglobal: -x wants a depth from 0 to 4, not '100'");
	refused("getglobal m f -x abc", "getglobal: -x wants a depth from 0 to 4, not 'abc'");
	refused("getglobal m f -x ''", "getglobal: -x wants a depth from 0 to 4, not ''");
	refused("getglobal m f -x 2.0", "getglobal: -x wants a depth from 0 to 4, not '2.0'");
	refused("getglobal m f -x 2x", "getglobal: -x wants a depth from 0 to 4, not '2x'");

	refused("getglobal", "getglobal: missing the module and the field " GETGLOBAL_USAGE);
	refused("getglobal -r", "getglobal: missing the module and the field " GETGLOBAL_USAGE);
	refused("getglobal __main__", "getglobal: missing the field after module '__main__' "
	    GETGLOBAL_USAGE);
	parse_fails("getglobal m C f g", "getglobal: expected at most 3 arguments, got 4 "
	    GETGLOBAL_USAGE);
	parse_fails("getglobal m f -e", "getglobal: option -e needs a value (EXPR)");
	parse_fails("getglobal m f -x", "getglobal: option -x needs a value (N)");
	parse_fails("getglobal m f --expand", "getglobal: option --expand needs a value (N)");
	parse_fails("getglobal m f --exp 2", "getglobal: unknown option '--exp': did you mean "
	    "'--expr'? " GETGLOBAL_USAGE);
	parse_fails("getglobal m f --verbos", "getglobal: unknown option '--verbos': did you mean "
	    "'--verbose'? " GETGLOBAL_USAGE);
	parse_fails("getglobal m f --raw=1", "getglobal: option --raw takes no value "
	    GETGLOBAL_USAGE);
	parse_fails("getglobal m f -f 'cost > 10'", "getglobal: unknown option '-f' "
	    GETGLOBAL_USAGE);
	parse_fails("getglobal m f -nm x", "getglobal: unknown option '-nm' " GETGLOBAL_USAGE);
	parse_fails("getglobal m f -E x", "getglobal: unknown option '-E': did you mean '-e'? "
	    GETGLOBAL_USAGE);
	parse_fails("getglobal m f --limits 5", "getglobal: unknown option '--limits' "
	    GETGLOBAL_USAGE);
	refused("getglobal m \xff", "getglobal: '\\xff' is not valid UTF-8");
	refused("getglobal m f -e '\xc3'", "getglobal: '\\xc3' is not valid UTF-8");
}

/* ---- vmtool -a getInstances -c module class ... | -a forceGc ----------------- */

static void
test_vmtool(void)
{
	parses("vmtool -a getInstances -c __main__ A",
	    "vmtool(__main__, A) --action=getInstances --class");
	parses("vmtool -a getInstances -c __main__ A -e instances[0].val",
	    "vmtool(__main__, A) --action=getInstances --class --expr=instances[0].val");
	parses("vmtool --action getInstances --class m A -n 1 -x 2 -r -v",
	    "vmtool(m, A) --action=getInstances --class --limits=1 --expand=2 --raw --verbose");
	parses("vmtool -a getInstances -c m A -n -1",
	    "vmtool(m, A) --action=getInstances --class --limits=-1");
	parses("vmtool -c m A -a getInstances", "vmtool(m, A) --class --action=getInstances");
	parses("vmtool -a forceGc", "vmtool() --action=forceGc");
	parses("vmtool --action=forceGc", "vmtool() --action=forceGc");
	/* Over a process set, in every member; alone, that one process. */
	parses("vmtool -a forceGc --all", "vmtool() --action=forceGc --all");
	passes("vmtool -a forceGc --all");
	passes("vmtool -a getInstances -c m A -n 1 --all");

	passes("vmtool -a getInstances -c __main__ A");
	passes("vmtool -a getInstances -c __main__ A -e instances[0].val");
	passes("vmtool -a getInstances -c m A -e 'len(instances)' -x 4 -n 1 -v -r");
	passes("vmtool -c m A -a getInstances");
	passes("vmtool -a forceGc");
	/* -n: 10 by default, -1 for all, at least 1. */
	passes("vmtool -a getInstances -c m A -n -1");
	passes("vmtool -a getInstances -c m A -n 1");
	passes("vmtool -a getInstances -c m A --limits=9223372036854775807");
	refused("vmtool -a getInstances -c m A -n 0", "vmtool: -n wants a number of instances from 1 up, or -1 for all, not '0'");
	refused("vmtool -a getInstances -c m A -n -5", "vmtool: -n wants a number of instances from 1 up, or -1 for all, not '-5'");
	refused("vmtool -a getInstances -c m A -x 5", "vmtool: -x wants a depth from 0 to 4, not '5'");
	refused("vmtool -a getInstances -c m A -n ten", "vmtool: -n wants a number of instances from 1 up, or -1 for all, not 'ten'");
	refused("vmtool -a getInstances -c m A -n 99999999999999999999",
	    "vmtool: -n wants a number of instances from 1 up, or -1 for all, not '99999999999999999999'");
	refused("vmtool -a getInstances -c m A -x y", "vmtool: -x wants a depth from 0 to 4, not 'y'");

	refused("vmtool", "vmtool: say what to do: -a getInstances or -a forceGc " VMTOOL_USAGE);
	refused("vmtool -c m A", "vmtool: say what to do: -a getInstances or -a forceGc "
	    VMTOOL_USAGE);
	refused("vmtool -a getinstances -c m A", "vmtool: unknown action 'getinstances': did you "
	    "mean 'getInstances'?");
	refused("vmtool -a forcegc", "vmtool: unknown action 'forcegc': did you mean 'forceGc'?");
	refused("vmtool -a dump", "vmtool: unknown action 'dump' (getInstances or forceGc)");
	refused("vmtool -a ''", "vmtool: unknown action '' (getInstances or forceGc)");
	refused("vmtool -a getInstances", "vmtool: missing the module and the class "
	    "(usage: vmtool -a getInstances -c module class)");
	refused("vmtool -a getInstances -c", "vmtool: missing the module and the class "
	    "(usage: vmtool -a getInstances -c module class)");
	refused("vmtool -a getInstances -c __main__", "vmtool: missing the class after module "
	    "'__main__' (usage: vmtool -a getInstances -c module class)");
	refused("vmtool -a forceGc __main__", "vmtool: -a forceGc takes no module or class");
	refused("vmtool -a forceGc -c m A", "vmtool: -a forceGc takes no module or class");
	refused("vmtool -a forceGc -n abc", "vmtool: -a forceGc takes no other option (-n)");
	refused("vmtool -a forceGc -x 2 -r", "vmtool: -a forceGc takes no other option (-x)");
	refused("vmtool -a forceGc -e instances", "vmtool: -a forceGc takes no other option (-e)");
	refused("vmtool -c -a forceGc", "vmtool: -a forceGc takes no other option (-c)");
	refused("vmtool -a forceGc --verbose", "vmtool: -a forceGc takes no other option (-v)");
	passes("vmtool -a getInstances -a forceGc");
	parse_fails("vmtool -a getInstances -c m A B", "vmtool: expected at most 2 arguments, got 3 "
	    VMTOOL_USAGE);
	parse_fails("vmtool -a", "vmtool: option -a needs a value (ACTION)");
	parse_fails("vmtool -a getInstances -c m A -n", "vmtool: option -n needs a value (N)");
	parse_fails("vmtool -a getInstances -c m A -e", "vmtool: option -e needs a value (EXPR)");
	parse_fails("vmtool -a getInstances -c m A --limit 5", "vmtool: unknown option '--limit': "
	    "did you mean '--limits'? " VMTOOL_USAGE);
	parse_fails("vmtool -l", "vmtool: unknown option '-l' " VMTOOL_USAGE);
	parse_fails("vmtool -A forceGc", "vmtool: unknown option '-A': did you mean '-a'? "
	    VMTOOL_USAGE);
	parse_fails("vmtool -a getInstances --clas m A", "vmtool: unknown option '--clas': did you "
	    "mean '--class'? " VMTOOL_USAGE);
}

/* ---- module filepath ------------------------------------------------------ */

static void
test_module(void)
{
	parses("module /home/admin/main.py", "module(/home/admin/main.py)");
	parses("module ~/tt_main.py", "module(~/tt_main.py)");
	parses("module 'dir with space/x.py'", "module(dir with space/x.py)");
	parses("module -- -odd.py", "module(-odd.py)");
	passes("module /home/admin/main.py");
	passes("module ~/not_exist.py");
	refused("module", "module: missing the file path (usage: module filepath)");
	parse_fails("module a.py b.py", "module: expected at most 1 argument, got 2 "
	    "(usage: module filepath)");
	parse_fails("module -f a.py", "module: unknown option '-f' (usage: module filepath)");
	refused("module '\xfe.py'", "module: '\\xfe.py' is not valid UTF-8");
}

/* ---- console, execute ----------------------------------------------------- */

static void
test_console_execute(void)
{
	parses("console", "console()");
	passes("console");
	parse_fails("console --native", "console: unknown option '--native' (usage: console)");
	parse_fails("console x", "console: expected 0 arguments, got 1 (usage: console)");

	parses("execute 'import gc; print(gc.get_count())'",
	    "execute(import gc; print(gc.get_count()))");
	parses("execute print(1) -t 5", "execute(print(1)) --timeout=5");
	parses("execute -t 5 print(1)", "execute(print(1)) --timeout=5");
	parses("execute --timeout=5 x = 1", "execute(x, =, 1) --timeout=5");
	parses("execute x = -1", "execute(x, =, -1)");
	parses("execute -- print(-x)", "execute(print(-x))");
	parses("execute print(1) --all", "execute(print(1)) --all");
	passes("execute 'import gc; print(gc.get_count())'");
	passes("execute print(1) -t 1");
	passes("execute print(1) -t 31536000");
	passes("execute x = 1");
	refused("execute print(1) -t 0", "execute: -t wants seconds from 1 to 31536000 (a year), not '0'");
	refused("execute print(1) -t 31536001", "execute: -t wants seconds from 1 to 31536000 (a year), not '31536001'");
	refused("execute print(1) -t -1", "execute: -t wants seconds from 1 to 31536000 (a year), not '-1'");
	refused("execute print(1) -t 1.5", "execute: -t wants seconds from 1 to 31536000 (a year), not '1.5'");
	refused("execute print(1) -t soon", "execute: -t wants seconds from 1 to 31536000 (a year), not 'soon'");
	refused("execute", "execute: missing the file or the code " EXECUTE_USAGE);
	refused("execute -t 5", "execute: missing the file or the code " EXECUTE_USAGE);
	parse_fails("execute a = -b", "execute: unknown option '-b' " EXECUTE_USAGE);
	parse_fails("execute print(1) -t", "execute: option -t needs a value (SECONDS)");
	refused("execute 'print(\"\xff\")'", "execute: 'print(\"\\xff\")' is not valid UTF-8");
}

/*
 * The line parses, and then `name` is `want` (NULL: absent): an option's
 * value as given or its default (--expand), or a positional argument
 * (class).
 */
static void
part_is(const char *line, const char *name, const char *want)
{
	struct cmd_request *req = NULL;
	char *cause = NULL;
	const char *got;

	if (command_parse(line, &req, &cause) != FP_OK || req == NULL) {
		ok(0, "[%s] %s is %s", line, name, want ? want : "absent");
		diag("  cause: %s", cause ? cause : "(empty request)");
		free(cause);
		return;
	}
	got = name[0] == '-' ? command_value(req, name) : command_arg(req, name);
	if (want == NULL)
		ok(got == NULL, "[%s] %s is absent", line, name);
	else
		is_str(got ? got : "(null)", want, "[%s] %s is %s", line, name, want);
	command_request_free(req);
}


#define WATCH_USAGE "(usage: watch module [class] method [--expr EXPR] [-e] [-r] [-v] [-n N] " \
	"[-x N] [-f EXPR] [-nm NAME] [-b] [-s] [--stack] [-E])"

static void
test_watch(void)
{
	parses("watch __main__ func -x 2", "watch(__main__, func) --expand=2");
	parses("watch __main__ func -f \"args[0][\\\"query\\\"]=='hello'\"",
	    "watch(__main__, func) --filter=args[0][\"query\"]=='hello'");
	parses("watch __main__ func -f \"return_obj['success']==True\"",
	    "watch(__main__, func) --filter=return_obj['success']==True");
	parses("watch __main__ func --expr \"{return_obj,args}\" -f \"cost>10\"",
	    "watch(__main__, func) --expr={return_obj,args} --filter=cost>10");
	parses("watch __main__ classA func", "watch(__main__, classA, func)");
	parses("watch m C f -nm nested --expr args,kwargs,return_obj -e -r -v -n 50 -x 4",
	    "watch(m, C, f) --nested-method=nested --expr=args,kwargs,return_obj --exception --raw "
	    "--verbose --limits=50 --expand=4");
	parses("watch m f --raw --verbose --expand 2 --filter 'cost > 10' --limits 50",
	    "watch(m, f) --raw --verbose --expand=2 --filter=cost > 10 --limits=50");
	parses("watch m f --nested-method nested", "watch(m, f) --nested-method=nested");
	parses("watch m f -b -s --stack -E", "watch(m, f) --before --success --stack --regex");
	parses("watch m f --expr=args[0]._A__val", "watch(m, f) --expr=args[0]._A__val");
	part_is("watch __main__ classA func", "class", "classA");
	part_is("watch __main__ classA func", "method", "func");
	part_is("watch __main__ func", "class", NULL);
	part_is("watch __main__ func", "method", "func");
	/* The guide's defaults. */
	part_is("watch m f", "--expr", "args,kwargs");
	part_is("watch m f", "--expand", "1");
	part_is("watch m f", "--limits", "10");
	part_is("watch m f", "--filter", NULL);
	part_is("watch m f -n 50", "--limits", "50");

	parse_fails("watch", "watch: missing the module and the method " WATCH_USAGE);
	parse_fails("watch __main__", "watch: missing the method after module '__main__' "
	    WATCH_USAGE);
	parse_fails("watch m C f g", "watch: expected at most 3 arguments, got 4 " WATCH_USAGE);
	parse_fails("watch m f -n abc", "watch: -n wants a number of calls from 1 up, not 'abc'");
	parse_fails("watch m f -n 0", "watch: -n wants a number of calls from 1 up, not '0'");
	parse_fails("watch m f -n -1", "watch: -n wants a number of calls from 1 up, not '-1'");
	parse_fails("watch m f -x 5", "watch: -x wants a depth from 0 to 4, not '5'");
	parse_fails("watch m f -nm", "watch: option -nm needs a value (NAME)");
	parse_fails("watch m f -f", "watch: option -f needs a value (EXPR)");
	parse_fails("watch m f --exp x", "watch: unknown option '--exp': did you mean '--expr'? "
	    WATCH_USAGE);
	parse_fails("watch m f -t 5", "watch: unknown option '-t' " WATCH_USAGE);
	parse_fails("watch m f --raw=1", "watch: option --raw takes no value " WATCH_USAGE);
	parse_fails("watch m f -f 'cost > 10", "unterminated ' quote");
}

#define TRACE_USAGE "(usage: trace module [class] method [-i MS] [-nm NAME] [-et MS] [-d N] " \
	"[-n N] [-f EXPR] [-E] [--c-calls])"

static void
test_trace(void)
{
	parses("trace __main__ func", "trace(__main__, func)");
	parses("trace __main__ func -i 1", "trace(__main__, func) --interval=1");
	parses("trace __main__ classA func", "trace(__main__, classA, func)");
	parses("trace m f -nm nested -d 3 -i 0 -et 30 -n 50 -f \"args[0][\\\"query\\\"]=='hello'\"",
	    "trace(m, f) --nested-method=nested --depth=3 --interval=0 --entrance_time=30 "
	    "--limits=50 --filter=args[0][\"query\"]=='hello'");
	parses("trace m f --depth 3 --interval 0.1 --entrance_time 30 --limits 5 --filter x",
	    "trace(m, f) --depth=3 --interval=0.1 --entrance_time=30 --limits=5 --filter=x");
	parses("trace m f -i 0.05 -E", "trace(m, f) --interval=0.05 --regex");
	parses("trace m f --c-calls", "trace(m, f) --c-calls");
	part_is("trace m f", "--interval", "0.1");
	part_is("trace m f", "--limits", "10");
	part_is("trace m f", "--depth", NULL);

	parse_fails("trace", "trace: missing the module and the method " TRACE_USAGE);
	parse_fails("trace m f -i -1", "trace: -i wants milliseconds from 0 to 3600000, not '-1'");
	parse_fails("trace m f -i abc", "trace: -i wants milliseconds from 0 to 3600000, not 'abc'");
	parse_fails("trace m f -i 0x10", "trace: -i wants milliseconds from 0 to 3600000, not '0x10'");
	parse_fails("trace m f -i inf", "trace: -i wants milliseconds from 0 to 3600000, not 'inf'");
	parse_fails("trace m f -i nan", "trace: -i wants milliseconds from 0 to 3600000, not 'nan'");
	parse_fails("trace m f -i ''", "trace: -i wants milliseconds from 0 to 3600000, not ''");
	parse_fails("trace m f -d 0", "trace: -d wants a depth from 1 to 1000, not '0'");
	parse_fails("trace m f -d 1.5", "trace: -d wants a depth from 1 to 1000, not '1.5'");
	parse_fails("trace m f -et", "trace: option -et needs a value (MS)");
	parse_fails("trace m f -x 2", "trace: unknown option '-x' " TRACE_USAGE);
	parse_fails("trace m f --entrance-time 3", "trace: unknown option '--entrance-time': did "
	    "you mean '--entrance_time'? " TRACE_USAGE);
}

#define TT_USAGE "(usage: tt -t module [class] method [-nm NAME] [-n N] [-f EXPR] | " \
	"-l [-m NAME] | -i INDEX [-x N] [-r] [-v] [-p [--replay-times K] [--replay-interval MS]] " \
	"[-w EXPR] | -d INDEX | -da | -s EXPR)"

static void
test_tt(void)
{
	parses("tt -t __main__ func", "tt(__main__, func) --time-tunnel");
	parses("tt -t __main__ A func", "tt(__main__, A, func) --time-tunnel");
	parses("tt -l", "tt() --list");
	parses("tt -i 1000 -x 3", "tt() --index=1000 --expand=3");
	parses("tt -i 1000 -p", "tt() --index=1000 --play");
	parses("tt -t __main__ func -f \"return_obj['success']==True and cost>10\"",
	    "tt(__main__, func) --time-tunnel --filter=return_obj['success']==True and cost>10");
	parses("tt -t __main__ func -f \"args[0][\\\"query\\\"]=='hello'\"",
	    "tt(__main__, func) --time-tunnel --filter=args[0][\"query\"]=='hello'");
	parses("tt -d 1000", "tt() --delete=1000");
	parses("tt -da", "tt() --delete_all");
	parses("tt -l -m moduleA.classA.methodA", "tt() --list --method=moduleA.classA.methodA");
	parses("tt -l -m moduleA.None.func", "tt() --list --method=moduleA.None.func");
	parses("tt -t m f -nm nested -n 50", "tt(m, f) --time-tunnel --nested-method=nested "
	    "--limits=50");
	parses("tt --index 1000 --raw --verbose", "tt() --index=1000 --raw --verbose");
	parses("tt --list --method m.None.f", "tt() --list --method=m.None.f");
	parses("tt -s 'cost > 10'", "tt() --search=cost > 10");
	parses("tt -i 1000 -w 'args[0]'", "tt() --index=1000 --watch=args[0]");
	parses("tt -i 1000 -p --replay-times 3 --replay-interval 100",
	    "tt() --index=1000 --play --replay-times=3 --replay-interval=100");
	part_is("tt -t __main__ A func", "class", "A");
	part_is("tt -t __main__ func", "method", "func");
	part_is("tt -t m f", "--limits", "50");
	part_is("tt -i 1000", "--expand", "1");
	part_is("tt -i 1000 -p", "--replay-times", "1");

	parse_fails("tt", "tt: say what to do: -t to record, -l to list, -i INDEX to show, "
	    "-d INDEX or -da to delete, -s EXPR to search " TT_USAGE);
	parse_fails("tt -p", "tt: say what to do: -t to record, -l to list, -i INDEX to show, "
	    "-d INDEX or -da to delete, -s EXPR to search " TT_USAGE);
	parse_fails("tt __main__ func", "tt: say what to do: -t to record, -l to list, -i INDEX "
	    "to show, -d INDEX or -da to delete, -s EXPR to search " TT_USAGE);
	parse_fails("tt -t", "tt: missing the module and the method " TT_USAGE);
	parse_fails("tt -t __main__", "tt: missing the method after module '__main__' " TT_USAGE);
	parse_fails("tt -t m C f g", "tt: expected at most 3 arguments, got 4 " TT_USAGE);
	parse_fails("tt -l -i 1000", "tt: -i does not go with -l");
	parse_fails("tt -i 1000 -l", "tt: -l does not go with -i");
	parse_fails("tt -t m f -p", "tt: -p does not go with -t");
	parse_fails("tt -l -p", "tt: -p does not go with -l");
	parse_fails("tt -da -d 1000", "tt: -d does not go with -da");
	parse_fails("tt -l m f", "tt: module [class] method go after -t");
	parse_fails("tt -da 5", "tt: module [class] method go after -t");
	parse_fails("tt -i 999", "tt: -i wants a record index from 1000 up, not '999'");
	parse_fails("tt -i abc", "tt: -i wants a record index from 1000 up, not 'abc'");
	parse_fails("tt -d -1", "tt: -d wants a record index from 1000 up, not '-1'");
	parse_fails("tt -d", "tt: option -d needs a value (INDEX)");
	parse_fails("tt -i 1000 -p --replay-times 0",
	    "tt: --replay-times wants a number of replays from 1 to 1000000, not '0'");
	parse_fails("tt -t m f -n 0", "tt: -n wants a number of records from 1 up, not '0'");
	parse_fails("tt -l -m", "tt: option -m needs a value (NAME)");
}

#define MONITOR_USAGE "(usage: monitor module [class] method [-c SECONDS] [-n N] [-E])"

static void
test_monitor_reset(void)
{
	parses("monitor __main__ func", "monitor(__main__, func)");
	parses("monitor __main__ A f -c 5 -n 3 -E", "monitor(__main__, A, f) --cycle=5 --limits=3 "
	    "--regex");
	parses("monitor m f --cycle 0.5", "monitor(m, f) --cycle=0.5");
	part_is("monitor m f", "--cycle", "60");
	part_is("monitor m f", "--limits", NULL);
	parse_fails("monitor", "monitor: missing the module and the method " MONITOR_USAGE);
	parse_fails("monitor m f -c 0", "monitor: -c wants seconds from 0.1 to 86400, not '0'");
	parse_fails("monitor m f -n 0", "monitor: -n wants a number of cycles from 1 up, not '0'");

	parses("reset", "reset()");
	parse_fails("reset x", "reset: expected 0 arguments, got 1 (usage: reset [-a])");
	parses("reset -a", "reset() --all");
	parse_fails("reset -x", "reset: unknown option '-x' (usage: reset [-a])");
}

#define PERF_USAGE "(usage: perf [pid] [-f FILE] [-r HZ] [-d SECONDS] [--mode MODE] " \
	"[--format FORMAT] [--idle] [--threads] [--native] [--merge])"

static void
test_perf(void)
{
	parses("perf", "perf()");
	parses("perf 123", "perf(123)");
	parses("perf -f ~/flamegraph.svg", "perf() --filepath=~/flamegraph.svg");
	parses("perf -d 30 -f ~/flamegraph.svg", "perf() --duration=30 --filepath=~/flamegraph.svg");
	parses("perf -r 1000 --rate 1000 --duration 30 --filepath x.svg",
	    "perf() --rate=1000 --rate=1000 --duration=30 --filepath=x.svg");
	parses("perf --mode gil --format collapsed --idle --threads --native",
	    "perf() --mode=gil --format=collapsed --idle --threads --native");
	parses("perf --mode=cpu --format=speedscope", "perf() --mode=cpu --format=speedscope");
	parses("perf -d 1 --merge", "perf() --duration=1 --merge");
	part_is("perf 123", "pid", "123");
	part_is("perf", "--filepath", "flamegraph.svg");
	part_is("perf", "--rate", "100");
	part_is("perf", "--duration", NULL);
	part_is("perf", "--mode", "wall");
	part_is("perf", "--format", "svg");

	parse_fails("perf -r 0", "perf: -r wants a rate from 1 to 1000000 samples per second, "
	    "not '0'");
	parse_fails("perf -r 1e3", "perf: -r wants a rate from 1 to 1000000 samples per second, "
	    "not '1e3'");
	parse_fails("perf -d 0", "perf: -d wants seconds from 0.1 to 31536000, not '0'");
	parse_fails("perf --mode fast", "perf: unknown mode 'fast' (wall, cpu or gil)");
	parse_fails("perf --mode GIL", "perf: unknown mode 'GIL': did you mean 'gil'?");
	parse_fails("perf --format svgz", "perf: unknown format 'svgz': did you mean 'svg'?");
	parse_fails("perf --format", "perf: option --format needs a value (FORMAT)");
	parse_fails("perf x.svg", "perf: 'x.svg' is not a process id (to write the flamegraph to "
	    "a file: perf -f FILE)");
	parse_fails("perf 0", "perf: '0' is not a process id");
	parse_fails("perf 1 2", "perf: expected at most 1 argument, got 2 " PERF_USAGE);
	parse_fails("perf --idle=1", "perf: option --idle takes no value " PERF_USAGE);
}

#define GILSTAT_ON_USAGE "(usage: gilstat on [take_ms] [hold_ms] [interval_s] [max_threads])"

static void
test_gilstat(void)
{
	parses("gilstat on", "gilstat on()");
	parses("gilstat on 5 5", "gilstat on(5, 5)");
	parses("gilstat on 1 1 2", "gilstat on(1, 1, 2)");
	parses("gilstat on 0.5 2 10 8", "gilstat on(0.5, 2, 10, 8)");
	parses("gilstat off", "gilstat off()");
	part_is("gilstat on 5 6", "take_ms", "5");
	part_is("gilstat on 5 6", "hold_ms", "6");
	part_is("gilstat on 5 6", "interval_s", NULL);

	parse_fails("gilstat", "gilstat: say which: on or off (`help gilstat` shows each)");
	/* Built: with no process, on says so rather than that it is not built. */
	refused("gilstat on 5 5", "gilstat: no process attached (flight_profiler PID)");
	parse_fails("gilstat -x", "gilstat: say which: on or off (`help gilstat` shows each)");
	parse_fails("gilstat of", "gilstat: unknown subcommand 'of': did you mean 'off'? "
	    "(`help gilstat` shows each)");
	parse_fails("gilstat start", "gilstat: unknown subcommand 'start' (on or off)");
	parse_fails("gilstat on x", "gilstat on: take_ms wants milliseconds from 0 to 3600000, "
	    "not 'x'");
	parse_fails("gilstat on 5 -1", "gilstat on: hold_ms wants milliseconds from 0 to 3600000, "
	    "not '-1'");
	parse_fails("gilstat on 5 5 0", "gilstat on: interval_s wants seconds from 0.1 to 86400, "
	    "not '0'");
	parse_fails("gilstat on 5 5 5 0", "gilstat on: max_threads wants a number of threads from 1 "
	    "to 100000, not '0'");
	parse_fails("gilstat on 1 1 1 1 1", "gilstat on: expected at most 4 arguments, got 5 "
	    GILSTAT_ON_USAGE);
	parse_fails("gilstat off 5", "gilstat off: expected 0 arguments, got 1 (usage: gilstat off)");
	parse_fails("gilstat on -n 5", "gilstat on: unknown option '-n' " GILSTAT_ON_USAGE);
}

static void
test_mem(void)
{
	parses("mem summary", "mem summary()");
	parses("mem summary --limit 100 --order descending",
	    "mem summary() --limit=100 --order=descending");
	parses("mem summary --order ascending", "mem summary() --order=ascending");
	parses("mem diff --interval 10 --limit 100 --order descending",
	    "mem diff() --interval=10 --limit=100 --order=descending");
	parses("mem diff --interval 0.5", "mem diff() --interval=0.5");
	parses("mem sites start", "mem sites(start)");
	parses("mem sites start -f 5", "mem sites(start) --frames=5");
	parses("mem sites diff", "mem sites(diff)");
	parses("mem sites stop", "mem sites(stop)");
	parses("mem sites diff -i 3", "mem sites(diff) --interval=3");
	parses("mem rss", "mem rss()");
	part_is("mem summary", "--limit", "20");
	part_is("mem summary", "--order", "descending");
	part_is("mem diff", "--interval", "10");

	parse_fails("mem", "mem: say which: summary, diff, sites or rss (`help mem` shows each)");
	parse_fails("mem --limit 5", "mem: say which: summary, diff, sites or rss (`help mem` shows "
	    "each)");
	parse_fails("mem frobnicate", "mem: unknown subcommand 'frobnicate' (summary, diff, sites "
	    "or rss)");
	parse_fails("mem sumary", "mem: unknown subcommand 'sumary': did you mean 'summary'? "
	    "(`help mem` shows each)");
	parse_fails("mem summary --order up", "mem summary: unknown order 'up' (descending or "
	    "ascending)");
	parse_fails("mem summary --order ascend", "mem summary: unknown order 'ascend': did you "
	    "mean 'ascending'?");
	parse_fails("mem summary --limit 0", "mem summary: --limit wants a number of types from 1 "
	    "to 1000000, not '0'");
	parse_fails("mem diff --interval 0", "mem diff: --interval wants seconds from 0.1 to 86400, "
	    "not '0'");
	parse_fails("mem summary --interval 5", "mem summary: unknown option '--interval' "
	    "(usage: mem summary [--limit N] [--order descending|ascending] [--all])");
	parse_fails("mem sites", "mem sites: missing what to do (usage: mem sites start [-f N] | "
	    "diff [-i SECONDS [-f N]] | stop)");
	parse_fails("mem sites go", "mem sites: unknown action 'go' (start, diff or stop)");
	parse_fails("mem sites start -f 0", "mem sites: -f wants a number of frames from 1 to 100, "
	    "not '0'");
	parse_fails("mem rss x", "mem rss: expected 0 arguments, got 1 (usage: mem rss)");
}

#define TORCH_MEMORY_USAGE "(usage: torch memory -s [-f FILE] | -r module [class] method " \
	"[-nm NAME] [-f FILE] [--timeout SECONDS])"

static void
test_torch(void)
{
	parses("torch profile __main__ A hello", "torch profile(__main__, A, hello)");
	parses("torch profile m f -f ~/trace.json", "torch profile(m, f) --filepath=~/trace.json");
	parses("torch profile m C f -nm nested --filepath t.json",
	    "torch profile(m, C, f) --nested-method=nested --filepath=t.json");
	parses("torch memory -s", "torch memory() --snapshot");
	parses("torch memory -r __main__ Solution call", "torch memory(__main__, Solution, call) "
	    "--record");
	parses("torch memory --snapshot -f ~/snapshot.pickle",
	    "torch memory() --snapshot --filepath=~/snapshot.pickle");
	parses("torch memory --record m f --filepath s.pickle",
	    "torch memory(m, f) --record --filepath=s.pickle");
	parses("torch memory -r m f -nm inner", "torch memory(m, f) --record --nested-method=inner");
	parses("torch modules", "torch modules()");
	parses("torch modules -n 3 --filter 'layer.*'", "torch modules() --steps=3 "
	    "--filter=layer.*");
	part_is("torch profile m f", "--filepath", "trace.json");
	part_is("torch memory -s", "--filepath", "snapshot.pickle");
	part_is("torch modules", "--steps", "1");
	part_is("torch memory -r __main__ Solution call", "class", "Solution");

	parse_fails("torch", "torch: say which: profile, memory or modules (`help torch` shows "
	    "each)");
	parse_fails("torch profil m f", "torch: unknown subcommand 'profil': did you mean "
	    "'profile'? (`help torch` shows each)");
	parse_fails("torch profile", "torch profile: missing the module and the method (usage: "
	    "torch profile module [class] method [-f FILE] [-nm NAME] [--timeout SECONDS])");
	parse_fails("torch memory", "torch memory: say which: -s (a snapshot) or -r module "
	    "[class] method (a recording)");
	parse_fails("torch memory -s -r m f", "torch memory: say which: -s (a snapshot) or -r "
	    "module [class] method (a recording)");
	parse_fails("torch memory -s m f", "torch memory: the arguments go after -r "
	    TORCH_MEMORY_USAGE);
	parse_fails("torch memory -r", "torch memory: missing the module and the method "
	    TORCH_MEMORY_USAGE);
	parse_fails("torch memory -s -nm x", "torch memory: -nm goes with -r");
	parse_fails("torch modules -n 0", "torch modules: -n wants a number of steps from 1 to "
	    "1000000, not '0'");
	parse_fails("torch modules m", "torch modules: expected 0 arguments, got 1 (usage: torch "
	    "modules [-n N] [--filter REGEX] [--timeout SECONDS])");
}

static void
test_typos(void)
{
	struct sbuf out = { 0 };
	char *cause = NULL;

	ok(command_help(&out, "trace", &cause) == FP_OK && strstr(out.s, "--nested-method") != NULL,
	    "help trace shows its options");
	sbuf_free(&out);
	/* A typo of a command names it. */
	parse_fails("traces m f", "unknown command 'traces': did you mean 'trace'? (`help` lists "
	    "commands)");
	parse_fails("wach m f", "unknown command 'wach': did you mean 'watch'? (`help` lists "
	    "commands)");
	parse_fails("gilstats on", "unknown command 'gilstats': did you mean 'gilstat'? (`help` "
	    "lists commands)");
	parse_fails("perff", "unknown command 'perff': did you mean 'perf'? (`help` lists commands)");
	/* The line is split first: a broken quote is still that. */
	refused("watch m f -f 'cost > 10", "unterminated ' quote");
}

/*
 * Every option and argument of the guide (seeds/002), as the guide writes
 * it, must be one of the table: what it cannot express is listed, and the
 * list must be empty.
 */
static void
test_guide_options(void)
{
	static const struct {
		const char *cmd, *shortname, *longname;
	} guide[] = {
		{ "stack", "-f", "--filepath" }, { "stack", NULL, "--native" },
		{ "watch", "-nm", "--nested-method" }, { "watch", NULL, "--expr" },
		{ "watch", "-e", NULL }, { "watch", "-r", "--raw" }, { "watch", "-v", "--verbose" },
		{ "watch", "-x", "--expand" }, { "watch", "-f", "--filter" },
		{ "watch", "-n", "--limits" },
		{ "trace", "-nm", "--nested-method" }, { "trace", "-d", "--depth" },
		{ "trace", "-i", "--interval" }, { "trace", "-et", "--entrance_time" },
		{ "trace", "-f", "--filter" }, { "trace", "-n", "--limits" },
		{ "tt", "-t", NULL }, { "tt", "-nm", "--nested-method" }, { "tt", "-n", "--limits" },
		{ "tt", "-l", "--list" }, { "tt", "-i", "--index" }, { "tt", "-d", "--delete" },
		{ "tt", "-da", "--delete_all" }, { "tt", "-r", "--raw" }, { "tt", "-v", "--verbose" },
		{ "tt", "-x", "--expand" }, { "tt", "-p", "--play" }, { "tt", "-f", "--filter" },
		{ "tt", "-m", "--method" },
		{ "getglobal", "-e", "--expr" }, { "getglobal", "-x", "--expand" },
		{ "getglobal", "-r", "--raw" }, { "getglobal", "-v", "--verbose" },
		{ "vmtool", "-a", NULL }, { "vmtool", "-c", NULL }, { "vmtool", "-e", "--expr" },
		{ "vmtool", "-x", "--expand" }, { "vmtool", "-r", "--raw" },
		{ "vmtool", "-v", "--verbose" }, { "vmtool", "-n", "--limits" },
		{ "perf", "-f", "--filepath" }, { "perf", "-r", "--rate" },
		{ "perf", "-d", "--duration" },
		{ "mem summary", NULL, "--limit" }, { "mem summary", NULL, "--order" },
		{ "mem diff", NULL, "--interval" }, { "mem diff", NULL, "--limit" },
		{ "mem diff", NULL, "--order" },
		{ "torch profile", "-nm", "--nested-method" }, { "torch profile", "-f", "--filepath" },
		{ "torch memory", "-s", "--snapshot" }, { "torch memory", "-r", "--record" },
		{ "torch memory", "-nm", "--nested-method" }, { "torch memory", "-f", "--filepath" },
	};
	/* The positional arguments: the guide's synopsis, as the table's names. */
	static const struct {
		const char *cmd, *params;
	} synopses[] = {
		{ "help", "command" }, { "stack", "pid" }, { "watch", "module class method" },
		{ "trace", "module class method" }, { "tt", "module class method" },
		{ "getglobal", "module class field" }, { "vmtool", "module class" },
		{ "module", "filepath" }, { "perf", "pid" }, { "console", "" },
		{ "gilstat on", "take_ms hold_ms interval_s max_threads" }, { "gilstat off", "" },
		{ "torch profile", "module class method" }, { "torch memory", "module class method" },
	};
	struct sbuf missing = { 0 };
	size_t i, k;

	for (i = 0; i < FP_NELEM(guide); i++) {
		const struct cmd_spec *spec = command_find(guide[i].cmd);
		bool found = false;

		for (k = 0; spec != NULL && k < spec->noptions && !found; k++) {
			const struct cmd_option *o = &spec->options[k];

			found = (guide[i].shortname == NULL || (o->shortname != NULL &&
			    strcmp(o->shortname, guide[i].shortname) == 0)) &&
			    (guide[i].longname == NULL || strcmp(o->longname, guide[i].longname) == 0);
		}
		if (!found)
			sbuf_addf(&missing, " %s %s", guide[i].cmd,
			    guide[i].shortname ? guide[i].shortname : guide[i].longname);
	}
	for (i = 0; i < FP_NELEM(synopses); i++) {
		const struct cmd_spec *spec = command_find(synopses[i].cmd);
		struct sbuf names = { 0 };

		sbuf_add(&names, "");
		for (k = 0; spec != NULL && k < spec->nparams; k++)
			sbuf_addf(&names, "%s%s", k ? " " : "", spec->params[k].name);
		if (spec == NULL || strcmp(names.s, synopses[i].params) != 0)
			sbuf_addf(&missing, " %s(%s)", synopses[i].cmd, synopses[i].params);
		sbuf_free(&names);
	}
	if (!ok(missing.len == 0, "the table expresses every option and argument of the guide"))
		diag("  cannot express:%s", missing.s);
	sbuf_free(&missing);
}

/* ---- the front ends' own commands, as the shared grammar sees them ---------- */

static int
bound_save(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	sbuf_addf(out, "%s saved to %s\n", (const char *)ctx, req->args[0]);
	return FP_OK;
}

static void
test_tui_only(void)
{
	struct sbuf out = { 0 };
	char *cause = NULL;
	int rc;

	/* Their grammar is the table's, as for any command. */
	parses("save stack.txt", "save(stack.txt)");
	parses("theme", "theme()");
	parses("theme light", "theme(light)");
	parses("delay 2", "delay(2)");
	parses("delay 0.5", "delay(0.5)");
	parses("quit", "quit()");
	parses("q", "quit()");
	parses("exit", "quit()");
	parse_fails("save", "save: missing the file name (usage: save FILE [--format FORMAT])");
	parse_fails("save a b", "save: expected at most 1 argument, got 2 (usage: save FILE "
	    "[--format FORMAT])");
	parses("save f.out --format collapsed", "save(f.out) --format=collapsed");
	parses("flame", "flame()");
	parses("flame -r 1000", "flame() --rate=1000");
	parse_fails("theme a b", "theme: expected at most 1 argument, got 2 (usage: theme [NAME])");
	parse_fails("delay", "delay: missing the interval (usage: delay SECONDS)");
	parse_fails("delay 0", "delay: seconds wants seconds from 0.1 to 3600, not '0'");
	parse_fails("delay 3601", "delay: seconds wants seconds from 0.1 to 3600, not '3601'");
	parse_fails("delay soon", "delay: seconds wants seconds from 0.1 to 3600, not 'soon'");
	parse_fails("quit now", "quit: expected 0 arguments, got 1 (usage: quit)");

	/* Where no front end bound them (--cmd), they say whose they are. */
	refused("save stack.txt", "'save' is a command of the full-screen view "
	    "(flight_profiler PID on a terminal, without --cmd)");
	refused("theme light", "'theme' is a command of the full-screen view "
	    "(flight_profiler PID on a terminal, without --cmd)");
	refused("delay 0", "'delay' is a command of the full-screen view "
	    "(flight_profiler PID on a terminal, without --cmd)");
	refused("flame", "'flame' is a command of the full-screen view "
	    "(flight_profiler PID on a terminal, without --cmd)");
	refused("quit", "'quit' is a command of the full-screen view and the line-mode prompt "
	    "(flight_profiler PID, without --cmd)");
	refused("exit", "'quit' is a command of the full-screen view and the line-mode prompt "
	    "(flight_profiler PID, without --cmd)");

	/* Bound, the runner dispatches to the front end's handler, with its context. */
	command_bind("save", bound_save, "the TUI");
	rc = runner_exec(nowhere, "save s.txt", &out, &cause);
	ok(rc == FP_OK && out.s != NULL && strcmp(out.s, "the TUI saved to s.txt\n") == 0,
	    "a bound command runs its front end's handler");
	sbuf_free(&out);
	refused("save", "save: missing the file name (usage: save FILE [--format FORMAT])");
	command_bind("stack", bound_save, "the TUI");
	passes("stack");
	ok(command_find("stack")->ctx == NULL, "core's commands cannot be rebound");
	command_bind("save", NULL, NULL);
	refused("save s.txt", "'save' is a command of the full-screen view "
	    "(flight_profiler PID on a terminal, without --cmd)");
	free(cause);
}

/* ---- completion: the same table --------------------------------------------- */

/* The completion candidates for `text` (cursor at the end), joined by '|'. */
static char *
completions(const char *text)
{
	struct cmdline c;
	struct sbuf s = { 0 };
	char **cands, *note = NULL;
	size_t n, i;

	cmdline_init(&c, NULL);
	cmdline_set(&c, text);
	cands = cmdline_complete(&c, NULL, &n, &note);
	sbuf_add(&s, "");
	for (i = 0; i < n; i++)
		sbuf_addf(&s, "%s%s", i ? "|" : "", cands[i]);
	strv_free(cands, n);
	free(note);
	cmdline_free(&c);
	return sbuf_steal(&s);
}

/*
 * A namer that answers with what it was asked: the kind of name and the
 * module and class before it, so that a test sees which positional
 * argument the completion took the word for.
 */
static char **
asked(void *ctx, enum cmdline_names kind, const char *module, const char *cls,
    const char *prefix, size_t *n, char **cause)
{
	static const char *const kinds[] = { "MODULES", "MEMBERS", "CLASSES", "CLASS_MEMBERS" };
	char **v = xcalloc(2, sizeof *v);

	v[0] = xasprintf("%s%s:%s:%s", prefix, kinds[kind], module ? module : "-", cls ? cls : "-");
	*n = 1;
	return v;
}

/* What completing `text` asks the process for ("" when nothing). */
static char *
asks(const char *text)
{
	struct cmdline_namer namer = { asked, NULL };
	struct cmdline c;
	char **cands, *note = NULL, *got;
	size_t n;

	cmdline_init(&c, NULL);
	cmdline_set(&c, text);
	cands = cmdline_complete(&c, &namer, &n, &note);
	got = xstrdup(n == 1 ? cands[0] : "");
	strv_free(cands, n);
	free(note);
	cmdline_free(&c);
	return got;
}

static void
test_completion_names(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "getglobal ", "MODULES:-:-" },
		{ "getglobal __main__ ", "MEMBERS:__main__:-" },
		{ "getglobal __main__ A ", "CLASS_MEMBERS:__main__:A" },
		{ "getglobal -x 2 __main__ ", "MEMBERS:__main__:-" },
		{ "getglobal -e target.a -r __main__ A ", "CLASS_MEMBERS:__main__:A" },
		{ "vmtool -a getInstances -c ", "MODULES:-:-" },
		{ "vmtool -a getInstances -c __main__ ", "CLASSES:__main__:-" },
		{ "vmtool -n 5 -c __main__ ", "CLASSES:__main__:-" },
		{ "stack ", "" },
		{ "module ", "" },
		{ "getglobal __main__ A f ", "" },
		{ "watch ", "MODULES:-:-" },
		{ "watch __main__ ", "MEMBERS:__main__:-" },
		{ "watch __main__ A ", "CLASS_MEMBERS:__main__:A" },
		{ "watch -x 2 -nm inner __main__ A ", "CLASS_MEMBERS:__main__:A" },
		{ "trace -i 1 __main__ ", "MEMBERS:__main__:-" },
		{ "tt -t __main__ ", "MEMBERS:__main__:-" },
		{ "monitor __main__ ", "MEMBERS:__main__:-" },
		{ "torch profile __main__ ", "MEMBERS:__main__:-" },
		{ "torch memory -r __main__ A ", "CLASS_MEMBERS:__main__:A" },
		{ "perf ", "" },
		{ "execute ", "" },
	};
	struct cmdline c;
	char **cands, *note = NULL, *got;
	size_t i, n;

	for (i = 0; i < FP_NELEM(cases); i++) {
		got = asks(cases[i].text);
		is_str(got, cases[i].want, "completing [%s] asks for %s", cases[i].text,
		    cases[i].want[0] ? cases[i].want : "nothing");
		free(got);
	}
	/* Without the agent, a name position says why nothing completes. */
	cmdline_init(&c, NULL);
	cmdline_set(&c, "getglobal ");
	cands = cmdline_complete(&c, NULL, &n, &note);
	is_str(note, "module, class and function names complete once the agent is attached",
	    "completing a module without the agent says why nothing comes");
	strv_free(cands, n);
	free(note);
	cmdline_free(&c);
}

static void
test_completion(void)
{
	static const struct {
		const char *text, *want;
	} values[] = {
		{ "vmtool -a ", "forceGc|getInstances" },
		{ "perf --mode ", "cpu|gil|wall" },
		{ "mem summary --order ", "ascending|descending" },
		{ "mem sites ", "diff|start|stop" },	/* an argument's choices */
		{ "gilstat ", "off|on" },
		{ "help s", "save|stack" },		/* the TUI's own too */
		{ "stack -f ", "" },			/* a file name is not guessed */
	};
	const struct cmd_spec *const *all;
	size_t nall, i, k;
	char *got, *text;

	all = command_all(&nall);
	got = completions("");
	for (i = 0; i < nall; i++)
		if (strstr(got, all[i]->name) == NULL)
			break;
	ok(i == nall, "every command completes from an empty line");
	free(got);
	for (i = 0; i < nall; i++) {
		bool every = true;

		if (all[i]->noptions == 0)
			continue;
		text = xasprintf("%s -", all[i]->name);
		got = completions(text);
		for (k = 0; k < all[i]->noptions; k++) {
			const struct cmd_option *o = &all[i]->options[k];

			if (strstr(got, o->longname) == NULL ||
			    (o->shortname != NULL && strstr(got, o->shortname) == NULL))
				every = false;
		}
		ok(every, "'%s' completes every option of %s", text, all[i]->name);
		if (!every)
			diag("  got: %s", got);
		free(got);
		free(text);
	}
	/* Subcommands complete, and then their own options (mem summary -). */
	for (i = 0; i < nall; i++) {
		for (k = 0; k < all[i]->nsubs; k++) {
			const struct cmd_spec *sub = all[i]->subs[k];
			size_t j;
			bool every = true;

			text = xasprintf("%s ", all[i]->name);
			got = completions(text);
			ok(strstr(got, strrchr(sub->name, ' ') + 1) != NULL, "'%s' completes %s", text,
			    sub->name);
			free(got);
			free(text);
			text = xasprintf("%s -", sub->name);
			got = completions(text);
			for (j = 0; j < sub->noptions; j++)
				if (strstr(got, sub->options[j].longname) == NULL)
					every = false;
			ok(every, "'%s' completes every option of %s", text, sub->name);
			free(got);
			free(text);
		}
	}
	/* Values of a kind the table knows: choices, commands, themes. */
	for (i = 0; i < FP_NELEM(values); i++) {
		got = completions(values[i].text);
		is_str(got, values[i].want, "'%s' completes %s", values[i].text,
		    values[i].want[0] ? values[i].want : "nothing");
		free(got);
	}
	got = completions("theme ");
	ok(strstr(got, "default") != NULL && strstr(got, "light") != NULL &&
	    strstr(got, "monochrome") != NULL, "theme completes the bundled themes");
	free(got);
	got = completions("help ");
	for (i = 0; i < nall; i++)
		if (strstr(got, all[i]->name) == NULL)
			break;
	ok(i == nall, "help completes every command");
	free(got);
}

/* The commands a front end may run in its background: those whose table entry names a streamer. */
static void
test_background(void)
{
	static const char *const yes[] = { "watch __main__ f", "monitor __main__ f -c 1",
	    "trace __main__ f -i 0" };
	static const char *const no[] = { "stack", "getglobal __main__ X", "tt -l", "reset",
	    "watch __main__", "execute 'print(1)'" };
	size_t i;

	for (i = 0; i < FP_NELEM(yes); i++)
		ok(runner_is_background(nowhere, yes[i]), "'%s' can run in the background", yes[i]);
	for (i = 0; i < FP_NELEM(no); i++)
		ok(!runner_is_background(nowhere, no[i]), "'%s' cannot", no[i]);
	ok(command_find("watch")->streamer == &runner_watch_streamer &&
	    command_find("monitor")->streamer == &runner_monitor_streamer &&
	    command_find("trace")->streamer == &runner_trace_streamer &&
	    command_find("tt")->streamer == NULL, "the table names each command's streamer");
	ok((command_find("watch")->flags & CMD_AGENT) && (command_find("trace")->flags & CMD_AGENT) &&
	    (command_find("monitor")->flags & CMD_AGENT) && (command_find("tt")->flags & CMD_AGENT) &&
	    !(command_find("stack")->flags & CMD_AGENT),
	    "watch, trace, monitor and tt load the agent: the TUI asks first");
	ok((command_find("getglobal")->flags & CMD_AGENT) && (command_find("vmtool")->flags & CMD_AGENT) &&
	    (command_find("module")->flags & CMD_AGENT) &&
	    (command_find("mem summary")->flags & CMD_AGENT) &&
	    (command_find("mem rss")->flags & CMD_AGENT) &&
	    (command_find("torch modules")->flags & CMD_AGENT) &&
	    !(command_find("reset")->flags & CMD_AGENT) && !(command_find("perf")->flags & CMD_AGENT),
	    "getglobal, vmtool, module, mem and torch load the agent too; reset and perf never do");
}

int
main(void)
{
	nowhere = runner_new(0);
	far = runner_new(0x3fffffff);
	test_split();
	test_split_errors();
	test_empty_and_unknown();
	test_help();
	test_stack();
	test_getglobal();
	test_vmtool();
	test_module();
	test_console_execute();
	test_watch();
	test_trace();
	test_tt();
	test_monitor_reset();
	test_background();
	test_perf();
	test_gilstat();
	test_mem();
	test_torch();
	test_typos();
	test_guide_options();
	test_tui_only();
	test_completion();
	test_completion_names();
	runner_free(nowhere);
	runner_free(far);
	return done_testing();
}
