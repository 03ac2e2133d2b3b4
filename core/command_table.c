/*
 * The command table: every command a user can type, with its arguments,
 * options, value kinds, bounds, defaults and handler.  The commands of the
 * guide that this build lacks (watch, trace, tt, monitor, perf, gilstat,
 * mem, torch) have their whole grammar here already, so that building one
 * is writing its handler.  Options beyond the guide come from the issues
 * that build them (10: watch, trace, tt, monitor; 11: perf, gilstat;
 * 12: mem, torch).
 */
#include "config.h"

#include "core/command.h"

#include <float.h>
#include <limits.h>
#include <string.h>

#include "core/gilstat_cmd.h"
#include "core/perf_cmd.h"
#include "core/runner.h"

#define ANY_LONG ((double)LONG_MAX)

/* ---- pieces several commands share -------------------------------------- */

#define MODULE_PARAM(help) \
	{ "module", "the module", CMD_MODULE, 0, help, NULL, 0, 0, NULL }
#define CLASS_PARAM(flags, help) \
	{ "class", "the class", CMD_CLASS, flags, help, NULL, 0, 0, NULL }
#define METHOD_PARAM \
	{ "method", "the method", CMD_METHOD, 0, "the function or method's name", NULL, 0, 0, NULL }

/* module [class] method: what watch, trace, tt -t, monitor and torch observe. */
static const struct cmd_param observed_params[] = {
	MODULE_PARAM("as imported: __main__, my.pkg.modulename"),
	CLASS_PARAM(CMD_OPTIONAL, "the class whose method it is, maybe dotted (Outer.Inner)"),
	METHOD_PARAM,
};

/* -x, -r, -v: how values are shown (the agent bounds them). */
#define EXPAND_OPTION \
	{ "-x", "--expand", "N", "expand N levels of lists, dicts and object attributes", \
	    CMD_INT, 0, 4, "1", NULL, "a depth from 0 to 4" }
#define VALUE_OPTIONS \
	EXPAND_OPTION, \
	{ "-r", "--raw", NULL, "show repr() of the value instead of expanding it", \
	    CMD_FLAG, 0, 0, NULL, NULL, NULL }, \
	{ "-v", "--verbose", NULL, "show every item of lists and dicts (default: the first 10)", \
	    CMD_FLAG, 0, 0, NULL, NULL, NULL }
#define NESTED_OPTION \
	{ "-nm", "--nested-method", "NAME", "observe NAME, a function defined inside the method " \
	    "(one level deep)", CMD_NESTED, 0, 0, NULL, NULL, NULL }
#define FILTER_OPTION(vars) \
	{ "-f", "--filter", "EXPR", "observe only the calls for which EXPR is true; EXPR sees " \
	    vars, CMD_EXPR, 0, 0, NULL, NULL, NULL }
#define LIMITS_OPTION(what, dflt) \
	{ "-n", "--limits", "N", "stop after N " what, CMD_INT, 1, ANY_LONG, dflt, NULL, \
	    "a number of " what " from 1 up" }
#define REGEX_OPTION \
	{ "-E", "--regex", NULL, "class and method are PCRE2 patterns (says how many matched)", \
	    CMD_FLAG, 0, 0, NULL, NULL, NULL }
#define FILEPATH_OPTION(help, dflt) \
	{ "-f", "--filepath", "FILE", help, CMD_FILE, 0, 0, dflt, NULL, NULL }
#define FLAG(s, l, help) { s, l, NULL, help, CMD_FLAG, 0, 0, NULL, NULL, NULL }
/* The commands of CMD_SET_ALL: one process alone ignores it. */
#define ALL_OPTION FLAG(NULL, "--all", "over a process set (--tree, --match, PID,PID): run in " \
	"every member in turn, each result under its process")

/* ---- help ----------------------------------------------------------------- */

static int
run_help(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	(void)ctx;
	return command_help(out, req->nargs ? req->args[0] : NULL, cause);
}

static const struct cmd_param help_params[] = {
	{ "command", "the command", CMD_COMMAND, CMD_OPTIONAL, "the command to explain",
	    NULL, 0, 0, NULL },
};

static struct cmd_spec cmd_help = {
	.name = "help",
	.usage = "[command]",
	.summary = "list the commands, or show how to use one",
	.params = help_params, .nparams = FP_NELEM(help_params),
	.flags = CMD_SET,
	.run = run_help,
};

/* ---- stack ------------------------------------------------------------------ */

static const struct cmd_param stack_params[] = {
	{ "pid", "the process", CMD_PID, CMD_OPTIONAL, "the process to read (default: the "
	    "attached one)", NULL, 1, 0x3fffffff, "(to write the stacks to a file: stack -f FILE)" },
};

static const char *const stack_group_by[] = { "function", NULL };

static const struct cmd_option stack_options[] = {
	FILEPATH_OPTION("write the dump to FILE instead of the screen", NULL),
	FLAG(NULL, "--native", "merge native (C/C++) frames with the Python frames; "
	    "each thread is stopped only while it is unwound"),
	FLAG(NULL, "--block", "stop the whole process while reading, for a consistent snapshot"),
	FLAG("-a", "--asyncio", "also show the asyncio tasks of every running event loop "
	    "(loads the agent)"),
	FLAG(NULL, "--locals", "show each Python frame's local variables (loads the agent)"),
	{ NULL, "--group", NULL, "over a process set (--tree, --match, PID,PID): merge identical "
	    "stacks across processes and threads, largest group first; --group=function ignores "
	    "line numbers", CMD_FLAG, 0, 0, NULL, stack_group_by, NULL },
};

static struct cmd_spec cmd_stack = {
	.name = "stack",
	.usage = "[pid] [-f FILE] [--native] [--block] [-a] [--locals] [--group[=function]]",
	.summary = "every thread's Python stack, read from outside the process "
	    "(with Python thread names when the agent is loaded)",
	.params = stack_params, .nparams = FP_NELEM(stack_params),
	.options = stack_options, .noptions = FP_NELEM(stack_options),
	.flags = CMD_SET,
	.run = runner_cmd_stack,
};

/* ---- getglobal, vmtool, module ------------------------------------------------ */

static const struct cmd_param getglobal_params[] = {
	MODULE_PARAM("as imported: __main__, my.pkg.modulename"),
	CLASS_PARAM(CMD_OPTIONAL, "the class whose static field it is, maybe dotted (Outer.Inner)"),
	{ "field", "the field", CMD_FIELD, 0, "the variable's name", NULL, 0, 0, NULL },
};

static const struct cmd_option getglobal_options[] = {
	{ "-e", "--expr", "EXPR", "show EXPR instead, where `target` is the field's value: "
	    "-e target.fieldA", CMD_EXPR, 0, 0, NULL, NULL, NULL },
	VALUE_OPTIONS,
	ALL_OPTION,
};

static struct cmd_spec cmd_getglobal = {
	.name = "getglobal",
	.usage = "module [class] field [-x N] [-e EXPR] [-r] [-v] [--all]",
	.summary = "show a module global or a class's static field (loads the agent)",
	.params = getglobal_params, .nparams = FP_NELEM(getglobal_params),
	.options = getglobal_options, .noptions = FP_NELEM(getglobal_options),
	.flags = CMD_SET_ALL | CMD_JSON_ANSWER | CMD_AGENT,
	.run = runner_cmd_getglobal,
};

static const char *const vmtool_actions[] = { "getInstances", "forceGc", NULL };

static const struct cmd_param vmtool_params[] = {
	MODULE_PARAM("where the class is (getInstances)"),
	CLASS_PARAM(0, "the class whose instances to find, subclasses included"),
};

static const struct cmd_option vmtool_options[] = {
	{ "-a", "--action", "ACTION", "getInstances: the live instances of a class; forceGc: run "
	    "a full garbage collection", CMD_CHOICE, 0, 0, NULL, vmtool_actions, NULL },
	FLAG("-c", "--class", "the class follows, as: module class"),
	{ "-e", "--expr", "EXPR", "show EXPR instead, where `instances` is the list of "
	    "instances: -e instances[0].val", CMD_EXPR, 0, 0, NULL, NULL, NULL },
	{ "-n", "--limits", "N", "instances to show, -1 for all", CMD_LIMIT, 0, ANY_LONG, "10",
	    NULL, "a number of instances from 1 up, or -1 for all" },
	VALUE_OPTIONS,
	ALL_OPTION,
};

#define VMTOOL_GET_USAGE "(usage: vmtool -a getInstances -c module class)"

/* -a picks what the rest means: forceGc takes nothing else. */
static int
vmtool_check(const struct cmd_request *req, char **cause)
{
	const char *action = command_opt(req, "--action");
	size_t i;

	if (action == NULL)
		return fail(cause, FP_EUSAGE, "vmtool: say what to do: -a getInstances or -a forceGc "
		    "(usage: vmtool %s)", req->spec->usage);
	if (strcmp(action, "forceGc") == 0) {
		if (req->nargs > 0)
			return fail(cause, FP_EUSAGE, "vmtool: -a forceGc takes no module or class");
		/* Not ignored: `-a forceGc -n abc` must not look accepted. */
		for (i = 0; i < req->nopts; i++) {
			const struct cmd_option *o = req->opts[i].opt;

			if (strcmp(o->longname, "--action") != 0 && strcmp(o->longname, "--all") != 0)
				return fail(cause, FP_EUSAGE, "vmtool: -a forceGc takes no other option "
				    "(%s)", o->shortname ? o->shortname : o->longname);
		}
	}
	if (strcmp(action, "getInstances") == 0 && req->nargs == 0)
		return fail(cause, FP_EUSAGE, "vmtool: missing the module and the class "
		    VMTOOL_GET_USAGE);
	if (strcmp(action, "getInstances") == 0 && req->nargs == 1)
		return fail(cause, FP_EUSAGE, "vmtool: missing the class after module '%s' "
		    VMTOOL_GET_USAGE, req->args[0]);
	return FP_OK;
}

static struct cmd_spec cmd_vmtool = {
	.name = "vmtool",
	.usage = "-a getInstances -c module class [-e EXPR] [-x N] [-n N] [-r] [-v] | -a forceGc "
	    "[--all]",
	.summary = "instances of a class, or a forced garbage collection (loads the agent)",
	.params = vmtool_params, .nparams = FP_NELEM(vmtool_params),
	.options = vmtool_options, .noptions = FP_NELEM(vmtool_options),
	.check = vmtool_check,
	.params_with = "--class",
	.flags = CMD_SET_ALL | CMD_JSON_ANSWER | CMD_AGENT,
	.run = runner_cmd_vmtool,
};

static const struct cmd_param module_params[] = {
	{ "filepath", "the file path", CMD_FILE, 0, "the file, as the process sees it (relative "
	    "to its working directory)", NULL, 0, 0, NULL },
};

static struct cmd_spec cmd_module = {
	.name = "module",
	.usage = "filepath",
	.summary = "which imported module a source file is, e.g. from a traceback (loads the agent)",
	.params = module_params, .nparams = FP_NELEM(module_params),
	.run = runner_cmd_module,
	.flags = CMD_JSON_ANSWER | CMD_AGENT,
};

/* ---- console, execute ----------------------------------------------------------- */

static struct cmd_spec cmd_console = {
	.name = "console",
	.usage = "",
	.summary = "an interactive Python console inside the process (loads the agent); "
	    "with --cmd, statements are read from standard input; `import __main__` reaches "
	    "the program's globals, exit() or Ctrl-D leaves, Ctrl-C interrupts a statement",
	.flags = CMD_STATEMENT | CMD_INTERACTIVE,
	.run = runner_cmd_console,
};

static const struct cmd_param execute_params[] = {
	{ "code", "the file or the code", CMD_CODE, CMD_MANY, "FILE: a script on this machine, "
	    "sent to the process; otherwise the words are the code: "
	    "execute 'import gc; print(gc.get_count())'", NULL, 0, 0, NULL },
};

static const struct cmd_option execute_options[] = {
	{ "-t", "--timeout", "SECONDS", "interrupt the code after SECONDS (default: wait until "
	    "it returns or Ctrl-C)", CMD_INT, 1, 86400 * 365, NULL, NULL,
	    "seconds from 1 to 31536000 (a year)" },
	ALL_OPTION,
};

static struct cmd_spec cmd_execute = {
	.name = "execute",
	.usage = "FILE | CODE... [-t SECONDS] [--all]",
	.summary = "run a Python script or statement inside the process and show its output or "
	    "traceback (loads the agent)",
	.params = execute_params, .nparams = FP_NELEM(execute_params),
	.options = execute_options, .noptions = FP_NELEM(execute_options),
	.flags = CMD_STATEMENT | CMD_SET_ALL | CMD_JSON_ANSWER,
	.run = runner_cmd_execute,
};

/* ---- the interactive front ends' own -------------------------------------------- */

static struct cmd_spec cmd_quit = {
	.name = "quit",
	.usage = "",
	.summary = "leave (the target keeps running); also q and exit",
	.flags = CMD_TUI | CMD_LINEMODE,
	.aliases = { "q", "exit" },
};

static const struct cmd_param save_params[] = {
	{ "file", "the file name", CMD_FILE, 0, "where to write", NULL, 0, 0, NULL },
};

static const char *const save_formats[] = { "svg", "collapsed", "speedscope", "text", NULL };

static const struct cmd_option save_options[] = {
	{ NULL, "--format", "FORMAT", "the flame pane's format (default: by the file's "
	    "extension, as perf's)", CMD_CHOICE, 0, 0, NULL, save_formats, NULL },
};

static struct cmd_spec cmd_save = {
	.name = "save",
	.usage = "FILE [--format FORMAT]",
	.summary = "write the selected thread's stack to FILE; from the flame pane, its flamegraph",
	.params = save_params, .nparams = FP_NELEM(save_params),
	.options = save_options, .noptions = FP_NELEM(save_options),
	.flags = CMD_TUI,
};

static const struct cmd_option flame_options[] = {
	{ "-r", "--rate", "HZ", "samples per second", CMD_INT, 1, 1000000, "100", NULL,
	    "a rate from 1 to 1000000 samples per second" },
};

static struct cmd_spec cmd_flame = {
	.name = "flame",
	.usage = "[-r HZ]",
	.summary = "a live flamegraph of the process, sampled from outside (also F)",
	.options = flame_options, .noptions = FP_NELEM(flame_options),
	.flags = CMD_TUI,
};

static const struct cmd_param theme_params[] = {
	{ "name", "the theme", CMD_THEME, CMD_OPTIONAL, "a bundled theme, or a theme file",
	    NULL, 0, 0, NULL },
};

static struct cmd_spec cmd_theme = {
	.name = "theme",
	.usage = "[NAME]",
	.summary = "switch theme; without NAME, list them",
	.params = theme_params, .nparams = FP_NELEM(theme_params),
	.flags = CMD_TUI,
};

static const struct cmd_param delay_params[] = {
	{ "seconds", "the interval", CMD_NUMBER, 0, "between two refreshes", NULL, 0.1, 3600,
	    "seconds from 0.1 to 3600" },
};

static struct cmd_spec cmd_delay = {
	.name = "delay",
	.usage = "SECONDS",
	.summary = "set the refresh interval",
	.params = delay_params, .nparams = FP_NELEM(delay_params),
	.flags = CMD_TUI,
};

/* ---- watch, trace, tt, monitor, reset (issue 10) ---------------------------------- */

#define CALL_VARS "target, return_obj, cost, args, kwargs"

static const struct cmd_option watch_options[] = {
	NESTED_OPTION,
	{ NULL, "--expr", "EXPR", "what to show of each call; sees " CALL_VARS, CMD_EXPR, 0, 0,
	    "args,kwargs", NULL, NULL },
	FLAG("-e", "--exception", "only calls that raise"),
	VALUE_OPTIONS,
	FILTER_OPTION(CALL_VARS),
	LIMITS_OPTION("calls", "10"),
	FLAG("-b", "--before", "observe at entry: the arguments as passed, before the body runs"),
	FLAG("-s", "--success", "only calls that return"),
	FLAG(NULL, "--stack", "show the Python call path that led to each call"),
	REGEX_OPTION,
};

static struct cmd_spec cmd_watch = {
	.name = "watch",
	.usage = "module [class] method [--expr EXPR] [-e] [-r] [-v] [-n N] [-x N] [-f EXPR] "
	    "[-nm NAME] [-b] [-s] [--stack] [-E]",
	.summary = "each call's arguments, result, exception and cost, as they happen",
	.params = observed_params, .nparams = FP_NELEM(observed_params),
	.options = watch_options, .noptions = FP_NELEM(watch_options),
	.flags = CMD_JSON_STREAM | CMD_AGENT,
	.run = runner_cmd_stream,
	.streamer = &runner_watch_streamer,
};

static const struct cmd_option trace_options[] = {
	{ "-i", "--interval", "MS", "show only inner calls slower than MS milliseconds", CMD_NUMBER,
	    0, 3600000, "0.1", NULL, "milliseconds from 0 to 3600000" },
	NESTED_OPTION,
	{ "-et", "--entrance_time", "MS", "show only calls of the method slower than MS "
	    "milliseconds", CMD_NUMBER, 0, 3600000, "0", NULL, "milliseconds from 0 to 3600000" },
	{ "-d", "--depth", "N", "show calls down to depth N (with -i 0: the whole path)", CMD_INT,
	    1, 1000, NULL, NULL, "a depth from 1 to 1000" },
	LIMITS_OPTION("calls", "10"),
	FILTER_OPTION("target, args, kwargs"),
	REGEX_OPTION,
	FLAG(NULL, "--c-calls", "show builtins (C calls) too, with the profile hook: costs more "
	    "on 3.10+"),
};

static struct cmd_spec cmd_trace = {
	.name = "trace",
	.usage = "module [class] method [-i MS] [-nm NAME] [-et MS] [-d N] [-n N] [-f EXPR] [-E] "
	    "[--c-calls]",
	.summary = "where the time inside a call goes: its call tree with each call's cost",
	.params = observed_params, .nparams = FP_NELEM(observed_params),
	.options = trace_options, .noptions = FP_NELEM(trace_options),
	.flags = CMD_JSON_STREAM | CMD_AGENT,
	.run = runner_cmd_stream,
	.streamer = &runner_trace_streamer,
};

static const struct cmd_option tt_options[] = {
	FLAG("-t", "--time-tunnel", "record the calls of: module [class] method"),
	NESTED_OPTION,
	LIMITS_OPTION("records", "50"),
	FLAG("-l", "--list", "list the records"),
	{ "-i", "--index", "INDEX", "show the record INDEX", CMD_INDEX, 1000, ANY_LONG, NULL, NULL,
	    "a record index from 1000 up" },
	{ "-d", "--delete", "INDEX", "delete the record INDEX", CMD_INDEX, 1000, ANY_LONG, NULL,
	    NULL, "a record index from 1000 up" },
	FLAG("-da", "--delete_all", "delete every record"),
	VALUE_OPTIONS,
	FLAG("-p", "--play", "call the method again with the arguments of record -i INDEX"),
	FILTER_OPTION(CALL_VARS),
	{ "-m", "--method", "NAME", "only the records of module.class.method (class None for a "
	    "function)", CMD_QUALNAME, 0, 0, NULL, NULL, NULL },
	{ "-s", "--search", "EXPR", "the records for which EXPR is true; EXPR sees " CALL_VARS,
	    CMD_EXPR, 0, 0, NULL, NULL, NULL },
	{ "-w", "--watch", "EXPR", "evaluate EXPR on record -i INDEX", CMD_EXPR, 0, 0, NULL, NULL,
	    NULL },
	{ NULL, "--replay-times", "K", "with -p: replay K times", CMD_INT, 1, 1000000, "1", NULL,
	    "a number of replays from 1 to 1000000" },
	{ NULL, "--replay-interval", "MS", "with -p: wait MS milliseconds between replays",
	    CMD_NUMBER, 0, 3600000, "0", NULL, "milliseconds from 0 to 3600000" },
	{ NULL, "--store-records", "N", "with -t: the store keeps at most N records, the oldest "
	    "evicted first (default 1000)", CMD_INT, 1, 1000000, NULL, NULL,
	    "a number of records from 1 to 1000000" },
	{ NULL, "--store-mib", "N", "with -t: the store keeps at most N MiB of the target's "
	    "objects alive, estimated (default 64)", CMD_INT, 1, 65536, NULL, NULL,
	    "a size in MiB from 1 to 65536" },
};

/* What each of tt's modes takes; the first mode given decides. */
static const struct {
	const char *mode;
	const char *takes;	/* the options that go with it, space-separated */
} tt_modes[] = {
	{ "--time-tunnel", "--nested-method --limits --filter --expand --raw --verbose "
	    "--store-records --store-mib" },
	{ "--list", "--method --expand --raw --verbose" },
	{ "--index", "--expand --raw --verbose --play --watch --replay-times --replay-interval" },
	{ "--delete", "" },
	{ "--delete_all", "" },
	{ "--search", "--method --expand --raw --verbose" },
};

static const char *
short_of(const struct cmd_option *o)
{
	return o->shortname ? o->shortname : o->longname;
}

static bool
in_list(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = strstr(list, word); p != NULL; p = strstr(p + 1, word))
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

static int
tt_check(const struct cmd_request *req, char **cause)
{
	const struct cmd_option *mode = NULL, *o;
	size_t i, k;

	for (i = 0; i < req->nopts && mode == NULL; i++)
		for (k = 0; k < FP_NELEM(tt_modes); k++)
			if (strcmp(req->opts[i].opt->longname, tt_modes[k].mode) == 0)
				mode = req->opts[i].opt;
	if (mode == NULL)
		return fail(cause, FP_EUSAGE, "tt: say what to do: -t to record, -l to list, -i INDEX "
		    "to show, -d INDEX or -da to delete, -s EXPR to search (usage: tt %s)",
		    req->spec->usage);
	for (k = 0; strcmp(tt_modes[k].mode, mode->longname) != 0; k++)
		;
	for (i = 0; i < req->nopts; i++) {
		o = req->opts[i].opt;
		if (o == mode || in_list(tt_modes[k].takes, o->longname))
			continue;
		if (strcmp(o->longname, mode->longname) == 0)
			continue;	/* given twice: the last one counts */
		return fail(cause, FP_EUSAGE, "tt: %s does not go with %s", short_of(o),
		    short_of(mode));
	}
	if (req->nargs > 0 && strcmp(mode->longname, "--time-tunnel") != 0)
		return fail(cause, FP_EUSAGE, "tt: module [class] method go after -t");
	return FP_OK;
}

static struct cmd_spec cmd_tt = {
	.name = "tt",
	.usage = "-t module [class] method [-nm NAME] [-n N] [-f EXPR] | -l [-m NAME] | "
	    "-i INDEX [-x N] [-r] [-v] [-p [--replay-times K] [--replay-interval MS]] [-w EXPR] | "
	    "-d INDEX | -da | -s EXPR",
	.summary = "record calls, then list, inspect, search and replay them",
	.params = observed_params, .nparams = FP_NELEM(observed_params),
	.options = tt_options, .noptions = FP_NELEM(tt_options),
	.check = tt_check,
	.params_with = "--time-tunnel",
	.flags = CMD_JSON_STREAM | CMD_AGENT,
	.run = runner_cmd_tt,
};

static const struct cmd_option monitor_options[] = {
	{ "-c", "--cycle", "SECONDS", "one line of figures every SECONDS", CMD_NUMBER, 0.1,
	    86400, "60", NULL, "seconds from 0.1 to 86400" },
	LIMITS_OPTION("cycles", NULL),
	REGEX_OPTION,
};

static struct cmd_spec cmd_monitor = {
	.name = "monitor",
	.usage = "module [class] method [-c SECONDS] [-n N] [-E]",
	.summary = "calls, failures and cost (average, min, max, p99) of a method, per cycle",
	.params = observed_params, .nparams = FP_NELEM(observed_params),
	.options = monitor_options, .noptions = FP_NELEM(monitor_options),
	.flags = CMD_JSON_STREAM | CMD_AGENT,
	.run = runner_cmd_stream,
	.streamer = &runner_monitor_streamer,
};

static const struct cmd_option reset_options[] = {
	FLAG("-a", "--all", "of every client of the process, not only this one"),
};

static struct cmd_spec cmd_reset = {
	.name = "reset",
	.usage = "[-a]",
	.summary = "remove every watch, trace, tt and monitor of this client now",
	.options = reset_options, .noptions = FP_NELEM(reset_options),
	.flags = CMD_JSON_ANSWER,
	.run = runner_cmd_reset,
};

/* ---- perf, gilstat (issue 11) ------------------------------------------------------ */

static const char *const perf_modes[] = { "wall", "cpu", "gil", NULL };
static const char *const perf_formats[] = { "svg", "collapsed", "speedscope", "text", NULL };

static const struct cmd_param perf_params[] = {
	{ "pid", "the process", CMD_PID, CMD_OPTIONAL, "the process to sample (default: the "
	    "attached one)", NULL, 1, 0x3fffffff,
	    "(to write the flamegraph to a file: perf -f FILE)" },
};

static const struct cmd_option perf_options[] = {
	FILEPATH_OPTION("where to write the flamegraph", "flamegraph.svg"),
	{ "-r", "--rate", "HZ", "samples per second", CMD_INT, 1, 1000000, "100", NULL,
	    "a rate from 1 to 1000000 samples per second" },
	{ "-d", "--duration", "SECONDS", "sample for SECONDS (default: until Ctrl-C)", CMD_NUMBER,
	    0.1, 31536000, NULL, NULL, "seconds from 0.1 to 31536000" },
	{ NULL, "--mode", "MODE", "wall: every sample; cpu: on-CPU samples only; gil: samples "
	    "holding the GIL", CMD_CHOICE, 0, 0, "wall", perf_modes, NULL },
	{ NULL, "--format", "FORMAT", "what to write", CMD_CHOICE, 0, 0, "svg", perf_formats, NULL },
	FLAG(NULL, "--idle", "keep the samples of idle threads"),
	FLAG(NULL, "--threads", "one flamegraph per thread"),
	FLAG(NULL, "--native", "with native (C/C++) frames"),
	FLAG(NULL, "--merge", "over a process set: fold every process together (no process roots)"),
};

static struct cmd_spec cmd_perf = {
	.name = "perf",
	.usage = "[pid] [-f FILE] [-r HZ] [-d SECONDS] [--mode MODE] [--format FORMAT] [--idle] "
	    "[--threads] [--native] [--merge]",
	.summary = "a flamegraph of where the time goes, sampled from outside the process",
	.params = perf_params, .nparams = FP_NELEM(perf_params),
	.options = perf_options, .noptions = FP_NELEM(perf_options),
	.flags = CMD_SET,
	.run = perf_cmd_run,
};

static const struct cmd_param gilstat_on_params[] = {
	{ "take_ms", "the take threshold", CMD_NUMBER, CMD_OPTIONAL, "report takes of the GIL "
	    "that waited longer than this (ms)", NULL, 0, 3600000, "milliseconds from 0 to 3600000" },
	{ "hold_ms", "the hold threshold", CMD_NUMBER, CMD_OPTIONAL, "report holds of the GIL "
	    "longer than this (ms)", NULL, 0, 3600000, "milliseconds from 0 to 3600000" },
	{ "interval_s", "the interval", CMD_NUMBER, CMD_OPTIONAL, "seconds between two "
	    "statistics reports (default 5)", NULL, 0.1, 86400, "seconds from 0.1 to 86400" },
	{ "max_threads", "the number of threads", CMD_INT, CMD_OPTIONAL, "threads in each report",
	    NULL, 1, 100000, "a number of threads from 1 to 100000" },
};

static struct cmd_spec cmd_gilstat_on = {
	.name = "gilstat on",
	.usage = "[take_ms] [hold_ms] [interval_s] [max_threads]",
	.summary = "per-thread GIL statistics every few seconds; with thresholds, a warning for "
	    "each long take or hold",
	.params = gilstat_on_params, .nparams = FP_NELEM(gilstat_on_params),
	.run = gilstat_cmd_on,
};

static struct cmd_spec cmd_gilstat_off = {
	.name = "gilstat off",
	.usage = "",
	.summary = "stop the GIL statistics",
	.run = gilstat_cmd_off,
};

static struct cmd_spec *const gilstat_subs[] = { &cmd_gilstat_on, &cmd_gilstat_off };

static struct cmd_spec cmd_gilstat = {
	.name = "gilstat",
	.usage = "on [take_ms] [hold_ms] [interval_s] [max_threads] | off",
	.summary = "who holds the GIL, and for how long",
	.subs = gilstat_subs, .nsubs = FP_NELEM(gilstat_subs),
};

/* ---- mem, torch (issue 12) ------------------------------------------------------------ */

static const char *const mem_orders[] = { "descending", "ascending", NULL };
static const char *const mem_sites_actions[] = { "start", "diff", "stop", NULL };

#define MEM_LIMIT_OPTION \
	{ NULL, "--limit", "N", "show the N largest types", CMD_INT, 1, 1000000, "20", NULL, \
	    "a number of types from 1 to 1000000" }
#define MEM_ORDER_OPTION \
	{ NULL, "--order", "ORDER", "by size", CMD_CHOICE, 0, 0, "descending", mem_orders, NULL }

static const struct cmd_option mem_summary_options[] = { MEM_LIMIT_OPTION, MEM_ORDER_OPTION,
	ALL_OPTION };

static struct cmd_spec cmd_mem_summary = {
	.name = "mem summary",
	.usage = "[--limit N] [--order descending|ascending] [--all]",
	.summary = "memory by type: object count and total size",
	.options = mem_summary_options, .noptions = FP_NELEM(mem_summary_options),
	.flags = CMD_SET_ALL | CMD_JSON_ANSWER | CMD_AGENT,
	.run = runner_cmd_mem_summary,
};

static const struct cmd_option mem_diff_options[] = {
	{ NULL, "--interval", "SECONDS", "the time between the two snapshots", CMD_NUMBER, 0.1,
	    86400, "10", NULL, "seconds from 0.1 to 86400" },
	MEM_LIMIT_OPTION,
	MEM_ORDER_OPTION,
};

static struct cmd_spec cmd_mem_diff = {
	.name = "mem diff",
	.usage = "[--interval SECONDS] [--limit N] [--order descending|ascending]",
	.summary = "what grew between two snapshots, by type",
	.options = mem_diff_options, .noptions = FP_NELEM(mem_diff_options),
	.flags = CMD_JSON_ANSWER | CMD_AGENT,
	.run = runner_cmd_mem_diff,
};

static const struct cmd_param mem_sites_params[] = {
	{ "action", "what to do", CMD_CHOICE, 0, "start tracing allocations, diff against the "
	    "start, or stop", mem_sites_actions, 0, 0, NULL },
};

static const struct cmd_option mem_sites_options[] = {
	{ "-f", "--frames", "N", "with start: keep N frames of each allocation's traceback",
	    CMD_INT, 1, 100, "1", NULL, "a number of frames from 1 to 100" },
	{ "-i", "--interval", "SECONDS", "with diff: wait SECONDS first; without a start in this "
	    "session, start before and stop after (one command, as --cmd needs)", CMD_NUMBER, 0.1,
	    86400, NULL, NULL, "seconds from 0.1 to 86400" },
};

static struct cmd_spec cmd_mem_sites = {
	.name = "mem sites",
	.usage = "start [-f N] | diff [-i SECONDS [-f N]] | stop",
	.summary = "allocation sites (file:line) through tracemalloc, and what grew",
	.params = mem_sites_params, .nparams = FP_NELEM(mem_sites_params),
	.options = mem_sites_options, .noptions = FP_NELEM(mem_sites_options),
	.flags = CMD_JSON_ANSWER | CMD_AGENT,
	.run = runner_cmd_mem_sites,
};

static struct cmd_spec cmd_mem_rss = {
	.name = "mem rss",
	.usage = "",
	.summary = "RSS, the Python allocator's arenas and the gap between them",
	.flags = CMD_JSON_ANSWER | CMD_AGENT,
	.run = runner_cmd_mem_rss,
};

static struct cmd_spec *const mem_subs[] = {
	&cmd_mem_summary, &cmd_mem_diff, &cmd_mem_sites, &cmd_mem_rss,
};

static struct cmd_spec cmd_mem = {
	.name = "mem",
	.usage = "summary [--limit N] [--order ORDER] | diff [--interval SECONDS] [--limit N] "
	    "[--order ORDER] | sites start [-f N] | sites diff [-i SECONDS] | sites stop | rss",
	.summary = "where the memory went: by type, between two points, by allocation site",
	.subs = mem_subs, .nsubs = FP_NELEM(mem_subs),
};

#define TORCH_TIMEOUT_OPTION(what) \
	{ NULL, "--timeout", "SECONDS", "give up when " what " within SECONDS", CMD_NUMBER, 0.1, \
	    86400, "60", NULL, "seconds from 0.1 to 86400" }

static const struct cmd_option torch_profile_options[] = {
	FILEPATH_OPTION("where to write the Chrome/Perfetto trace (the target's working directory "
	    "unless absolute)", "trace.json"),
	NESTED_OPTION,
	TORCH_TIMEOUT_OPTION("the method is not called"),
};

static struct cmd_spec cmd_torch_profile = {
	.name = "torch profile",
	.usage = "module [class] method [-f FILE] [-nm NAME] [--timeout SECONDS]",
	.summary = "profile the next call with torch.profiler",
	.params = observed_params, .nparams = FP_NELEM(observed_params),
	.options = torch_profile_options, .noptions = FP_NELEM(torch_profile_options),
	.flags = CMD_JSON_STREAM | CMD_AGENT,
	.run = runner_cmd_torch_profile,
};

static const struct cmd_option torch_memory_options[] = {
	FLAG("-s", "--snapshot", "a snapshot of the CUDA memory now"),
	FLAG("-r", "--record", "record the allocations of one call of: module [class] method"),
	NESTED_OPTION,
	FILEPATH_OPTION("where to write the snapshot, for pytorch.org/memory_viz",
	    "snapshot.pickle"),
	TORCH_TIMEOUT_OPTION("(with -r) the method is not called"),
};

static int
torch_memory_check(const struct cmd_request *req, char **cause)
{
	bool s = command_opt(req, "--snapshot") != NULL, r = command_opt(req, "--record") != NULL;

	if (s == r)
		return fail(cause, FP_EUSAGE, "torch memory: say which: -s (a snapshot) or "
		    "-r module [class] method (a recording)");
	if (s && command_opt(req, "--nested-method") != NULL)
		return fail(cause, FP_EUSAGE, "torch memory: -nm goes with -r");
	return FP_OK;
}

static struct cmd_spec cmd_torch_memory = {
	.name = "torch memory",
	.usage = "-s [-f FILE] | -r module [class] method [-nm NAME] [-f FILE] [--timeout SECONDS]",
	.summary = "a CUDA memory snapshot, or a recording of one call's allocations",
	.params = observed_params, .nparams = FP_NELEM(observed_params),
	.options = torch_memory_options, .noptions = FP_NELEM(torch_memory_options),
	.check = torch_memory_check,
	.params_with = "--record",
	.flags = CMD_JSON_STREAM | CMD_AGENT,
	.run = runner_cmd_torch_memory,
};

static const struct cmd_option torch_modules_options[] = {
	{ "-n", "--steps", "N", "observe N steps", CMD_INT, 1, 1000000, "1", NULL,
	    "a number of steps from 1 to 1000000" },
	{ NULL, "--filter", "REGEX", "only the modules whose name matches", CMD_REGEX, 0, 0, NULL,
	    NULL, NULL },
	TORCH_TIMEOUT_OPTION("the steps are not done"),
};

static struct cmd_spec cmd_torch_modules = {
	.name = "torch modules",
	.usage = "[-n N] [--filter REGEX] [--timeout SECONDS]",
	.summary = "per nn.Module: forward and backward time and memory, over N steps",
	.options = torch_modules_options, .noptions = FP_NELEM(torch_modules_options),
	.flags = CMD_JSON_STREAM | CMD_AGENT,
	.run = runner_cmd_torch_modules,
};

static struct cmd_spec *const torch_subs[] = {
	&cmd_torch_profile, &cmd_torch_memory, &cmd_torch_modules,
};

static struct cmd_spec cmd_torch = {
	.name = "torch",
	.usage = "profile module [class] method [-f FILE] [-nm NAME] | memory -s [-f FILE] | "
	    "memory -r module [class] method [-nm NAME] [-f FILE] | modules [-n N] [--filter REGEX]",
	.summary = "what a PyTorch model does: a profile, its CUDA memory, time per module",
	.subs = torch_subs, .nsubs = FP_NELEM(torch_subs),
};

/* ---- the table -------------------------------------------------------------------------- */

/* In the order `help` lists them. */
struct cmd_spec *const command_table[] = {
	&cmd_help, &cmd_stack, &cmd_getglobal, &cmd_vmtool, &cmd_module, &cmd_console,
	&cmd_execute,
	&cmd_quit, &cmd_save, &cmd_theme, &cmd_delay, &cmd_flame,
	&cmd_watch, &cmd_trace, &cmd_tt, &cmd_monitor, &cmd_reset, &cmd_perf, &cmd_gilstat,
	&cmd_mem, &cmd_torch,
};
const size_t command_table_size = FP_NELEM(command_table);
