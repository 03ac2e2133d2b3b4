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
#define NOT_YET "' is a command of the guide that this build does not have yet; " \
	"`help` lists the ones it has"

#define STACK_USAGE "(usage: stack [pid] [-f FILE] [--native] [--block] [-a] [--locals])"
#define GETGLOBAL_USAGE "(usage: getglobal module [class] field [-x N] [-e EXPR] [-r] [-v])"
#define VMTOOL_USAGE "(usage: vmtool -a getInstances -c module class [-e EXPR] [-x N] " \
	"[-n N] [-r] [-v] | -a forceGc)"
#define EXECUTE_USAGE "(usage: execute FILE | CODE... [-t SECONDS])"

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
	command_words_free(words, n);
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
		"help", "stack", "getglobal", "vmtool", "module", "console", "execute",
	};
	static const char *const planned[] = {
		"watch", "trace", "tt", "perf", "mem", "gilstat", "torch",
	};
	struct sbuf out = { 0 };
	char *cause = NULL, *line;
	size_t i, k;
	int rc;

	parses("help", "help()");
	parses("help stack", "help(stack)");
	parses("help watch", "help(watch)");
	parse_fails("help stack vmtool", "help: expected at most 1 argument, got 2 "
	    "(usage: help [command])");
	parse_fails("help -x", "help: unknown option '-x' (usage: help [command])");
	refused("help nope", "unknown command 'nope' (`help` lists commands)");
	refused("help stak", "unknown command 'stak': did you mean 'stack'? (`help` lists commands)");

	rc = command_help(&out, NULL, &cause);
	ok(rc == FP_OK && out.s != NULL, "help lists the commands");
	for (i = 0; i < FP_NELEM(built); i++) {
		line = xasprintf("\n  %-10s ", built[i]);
		ok(out.s != NULL && strstr(out.s, line) != NULL, "help lists %s", built[i]);
		free(line);
	}
	for (i = 0; i < FP_NELEM(planned); i++) {
		line = xasprintf("\n  %s ", planned[i]);
		ok(out.s != NULL && strstr(out.s, line) == NULL, "help does not list %s", planned[i]);
		free(line);
		ok(command_find(planned[i]) == NULL, "%s is not a command of this build", planned[i]);
	}
	sbuf_free(&out);

	/* Every built command's help shows its usage and every option. */
	for (i = 0; i < FP_NELEM(built); i++) {
		const struct cmd_spec *spec = command_find(built[i]);
		bool all = true;

		if (!ok(spec != NULL, "%s is in the command table", built[i]))
			continue;
		rc = command_help(&out, built[i], &cause);
		line = xasprintf("USAGE\n  %s%s%s\n\n", spec->name, spec->usage[0] ? " " : "",
		    spec->usage);
		ok(rc == FP_OK && out.s != NULL && strncmp(out.s, line, strlen(line)) == 0,
		    "help %s starts with its usage, no space after it", built[i]);
		free(line);
		for (k = 0; k < spec->noptions; k++) {
			const struct cmd_option *o = &spec->options[k];

			if (strstr(out.s, o->longname) == NULL ||
			    (o->shortname != NULL && strstr(out.s, o->shortname) == NULL) ||
			    (o->arg != NULL && strstr(out.s, o->arg) == NULL))
				all = false;
		}
		ok(all, "help %s shows each of its %zu options", built[i], spec->noptions);
		sbuf_free(&out);
	}

	/* The guide's defaults and bounds are said where the options are. */
	command_help(&out, "getglobal", &cause);
	ok(strstr(out.s, "-x, --expand N") != NULL && strstr(out.s, "(default 1, at most 4)") != NULL,
	    "help getglobal: -x defaults to 1, at most 4 (the guide's)");
	sbuf_free(&out);
	command_help(&out, "vmtool", &cause);
	ok(strstr(out.s, "-n, --limits N") != NULL && strstr(out.s, "default 10, -1 for all") != NULL,
	    "help vmtool: -n defaults to 10, -1 for all (the guide's)");
	ok(strstr(out.s, "getInstances") != NULL && strstr(out.s, "forceGc") != NULL,
	    "help vmtool names both actions");
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

/* ---- commands of the guide this build does not have --------------------- */

static void
test_planned(void)
{
	/* Every form the guide shows, and some it refuses: one clear answer. */
	static const char *const forms[] = {
		"watch __main__ func -x 2",
		"watch __main__ func -f \"args[0][\\\"query\\\"]=='hello'\"",
		"watch __main__ func -f \"return_obj['success']==True\"",
		"watch __main__ func --expr \"{return_obj,args}\" -f \"cost>10\"",
		"watch __main__ classA func",
		"watch m C f -nm nested --expr args,kwargs,return_obj -e -r -v -n 50 -x 4",
		"watch m f --raw --verbose --expand 2 --filter 'cost > 10' --limits 50",
		"watch m f --nested-method nested",
		"watch",
		"watch m f -n abc",
		"trace __main__ func",
		"trace __main__ func -i 1",
		"trace __main__ classA func",
		"trace m f -nm nested -d 3 -i 0 -et 30 -n 50 -f \"args[0][\\\"query\\\"]=='hello'\"",
		"trace m f --depth 3 --interval 0.1 --entrance_time 30 --limits 5 --filter x",
		"tt -t __main__ func",
		"tt -t __main__ A func",
		"tt -l",
		"tt -i 1000 -x 3",
		"tt -i 1000 -p",
		"tt -t __main__ func -f \"return_obj['success']==True and cost>10\"",
		"tt -t __main__ func -f \"args[0][\\\"query\\\"]=='hello'\"",
		"tt -d 1000",
		"tt -da",
		"tt -l -m moduleA.classA.methodA",
		"tt -t m f -nm nested -n 50 -r -v",
		"tt --list --index 1 --delete 2 --delete_all --play --method m.None.f",
		"perf",
		"perf 123",
		"perf -f ~/flamegraph.svg",
		"perf -d 30 -f ~/flamegraph.svg",
		"perf -r 1000 --rate 1000 --duration 30 --filepath x.svg",
		"mem summary",
		"mem summary --limit 100 --order descending",
		"mem summary --order ascending",
		"mem diff --interval 10 --limit 100 --order descending",
		"mem",
		"mem frobnicate",
		"gilstat on",
		"gilstat on 5 5",
		"gilstat off",
		"torch profile __main__ A hello",
		"torch profile m f -f ~/trace.json",
		"torch profile m C f -nm nested --filepath t.json",
		"torch memory -s",
		"torch memory -r __main__ Solution call",
		"torch memory --snapshot -f ~/snapshot.pickle",
		"torch memory --record m f --filepath s.pickle",
		"torch",
	};
	size_t i;

	for (i = 0; i < FP_NELEM(forms); i++) {
		char *name = xstrndup(forms[i], strcspn(forms[i], " "));
		char *want = xasprintf("'%s" NOT_YET, name);

		parse_fails(forms[i], want);
		free(want);
		want = xasprintf("help %s", name);
		free(name);
		name = want;
		want = xasprintf("'%s" NOT_YET, name + 5);
		refused(name, want);
		free(name);
		free(want);
	}
	/* A typo of one of them names it, and says it is not here. */
	parse_fails("traces m f", "unknown command 'traces': did you mean 'trace'? (a command of "
	    "the guide that this build does not have yet; `help` lists the ones it has)");
	parse_fails("wach m f", "unknown command 'wach': did you mean 'watch'? (a command of "
	    "the guide that this build does not have yet; `help` lists the ones it has)");
	parse_fails("gilstats on", "unknown command 'gilstats': did you mean 'gilstat'? (a command "
	    "of the guide that this build does not have yet; `help` lists the ones it has)");
	parse_fails("perff", "unknown command 'perff': did you mean 'perf'? (a command of "
	    "the guide that this build does not have yet; `help` lists the ones it has)");
	/* The line is split first: a broken quote is still that. */
	parse_fails("watch m f -f 'cost > 10", "unterminated ' quote");
}

/* ---- TUI-only commands, as the shared grammar sees them ----------------- */

static void
test_tui_only(void)
{
	/*
	 * save, theme, delay and quit are the TUI's own (tui/commands.c); --cmd and
	 * line mode do not have them, and say so without a wrong suggestion.
	 */
	parse_fails("save stack.txt", "unknown command 'save' (`help` lists commands)");
	parse_fails("theme light", "unknown command 'theme' (`help` lists commands)");
	parse_fails("delay 2", "unknown command 'delay' (`help` lists commands)");
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
	cands = cmdline_complete(&c, NULL, 0, NULL, &n, &note);
	sbuf_add(&s, "");
	for (i = 0; i < n; i++)
		sbuf_addf(&s, "%s%s", i ? "|" : "", cands[i]);
	command_words_free(cands, n);
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
	cands = cmdline_complete(&c, NULL, 0, &namer, &n, &note);
	got = xstrdup(n == 1 ? cands[0] : "");
	command_words_free(cands, n);
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
	cands = cmdline_complete(&c, NULL, 0, NULL, &n, &note);
	is_str(note, "module, class and function names complete once the agent is attached",
	    "completing a module without the agent says why nothing comes");
	command_words_free(cands, n);
	free(note);
	cmdline_free(&c);
}

static void
test_completion(void)
{
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
	got = completions("vmtool -a ");
	is_str(got, "forceGc|getInstances", "vmtool -a completes the two actions");
	free(got);
	got = completions("help ");
	for (i = 0; i < nall; i++)
		if (strstr(got, all[i]->name) == NULL)
			break;
	ok(i == nall, "help completes every command");
	free(got);
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
	test_planned();
	test_tui_only();
	test_completion();
	test_completion_names();
	runner_free(nowhere);
	runner_free(far);
	return done_testing();
}
