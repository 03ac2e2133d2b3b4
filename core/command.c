#include "config.h"

#include "core/command.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct cmd_option stack_options[] = {
	{ "-f", "--filepath", "FILE", "write the dump to FILE instead of the screen" },
	{ NULL, "--native", NULL, "merge native (C/C++) frames with the Python frames; "
	    "each thread is stopped only while it is unwound" },
	{ NULL, "--block", NULL, "stop the whole process while reading, for a consistent snapshot" },
	{ "-a", "--asyncio", NULL, "also show the asyncio tasks of every running event loop "
	    "(loads the agent)" },
	{ NULL, "--locals", NULL, "show each Python frame's local variables (loads the agent)" },
};

static const struct cmd_spec cmd_stack = {
	.name = "stack",
	.usage = "[pid] [-f FILE] [--native] [--block] [-a] [--locals]",
	.summary = "every thread's Python stack, read from outside the process "
	    "(with Python thread names when the agent is loaded)",
	.positional = "pid: the process to read (default: the attached one)",
	.min_args = 0, .max_args = 1,
	.options = stack_options, .noptions = FP_NELEM(stack_options),
};

static const struct cmd_spec cmd_help = {
	.name = "help",
	.usage = "[command]",
	.summary = "list the commands, or show how to use one",
	.positional = "command: the command to explain",
	.min_args = 0, .max_args = 1,
};

/* -x, -r, -v: how values are shown (getglobal, vmtool; the agent bounds them). */
#define VALUE_OPTIONS \
	{ "-x", "--expand", "N", "expand N levels of lists, dicts and object attributes " \
	    "(default 1, at most 4)" }, \
	{ "-r", "--raw", NULL, "show repr() of the value instead of expanding it" }, \
	{ "-v", "--verbose", NULL, "show every item of lists and dicts (default: the first 10)" }

static const struct cmd_option getglobal_options[] = {
	{ "-e", "--expr", "EXPR", "show EXPR instead, where `target` is the field's value: "
	    "-e target.fieldA" },
	VALUE_OPTIONS,
};

static const struct cmd_spec cmd_getglobal = {
	.name = "getglobal",
	.usage = "module [class] field [-x N] [-e EXPR] [-r] [-v]",
	.summary = "show a module global or a class's static field (loads the agent)",
	.positional = "module: as imported (__main__, my.pkg.mod); class: optional, may be "
	    "dotted (Outer.Inner); field: the variable's name",
	.min_args = 0, .max_args = 3,	/* the runner says which part is missing */
	.options = getglobal_options, .noptions = FP_NELEM(getglobal_options),
};

static const struct cmd_option vmtool_options[] = {
	{ "-a", "--action", "ACTION", "getInstances: the live instances of a class (subclasses "
	    "included); forceGc: run a full garbage collection" },
	{ "-c", "--class", NULL, "the class follows, as: module class" },
	{ "-e", "--expr", "EXPR", "show EXPR instead, where `instances` is the list of "
	    "instances: -e instances[0].val" },
	{ "-n", "--limits", "N", "instances to show (default 10, -1 for all)" },
	VALUE_OPTIONS,
};

static const struct cmd_spec cmd_vmtool = {
	.name = "vmtool",
	.usage = "-a getInstances -c module class [-e EXPR] [-x N] [-n N] [-r] [-v] | -a forceGc",
	.summary = "instances of a class, or a forced garbage collection (loads the agent)",
	.positional = "module class: where the class is (getInstances)",
	.min_args = 0, .max_args = 2,
	.options = vmtool_options, .noptions = FP_NELEM(vmtool_options),
};

static const struct cmd_spec cmd_module = {
	.name = "module",
	.usage = "filepath",
	.summary = "which imported module a source file is, e.g. from a traceback (loads the agent)",
	.positional = "filepath: the file, as the process sees it (relative to its working directory)",
	.min_args = 0, .max_args = 1,
};

static const struct cmd_spec cmd_console = {
	.name = "console",
	.usage = "",
	.summary = "an interactive Python console inside the process (loads the agent); "
	    "with --cmd, statements are read from standard input",
	.positional = "none; inside, `import __main__` reaches the program's globals; "
	    "exit() or Ctrl-D leaves, Ctrl-C interrupts a statement",
	.min_args = 0, .max_args = 0,
};

static const struct cmd_option execute_options[] = {
	{ "-t", "--timeout", "SECONDS", "interrupt the code after SECONDS (default: wait until "
	    "it returns or Ctrl-C)" },
};

static const struct cmd_spec cmd_execute = {
	.name = "execute",
	.usage = "FILE | CODE... [-t SECONDS]",
	.summary = "run a Python script or statement inside the process and show its output or "
	    "traceback (loads the agent)",
	.positional = "FILE: a script on this machine, sent to the process; otherwise the words "
	    "are the code: execute 'import gc; print(gc.get_count())'",
	.min_args = 0, .max_args = 256,
	.options = execute_options, .noptions = FP_NELEM(execute_options),
};

static const struct cmd_spec *const commands[] = {
	&cmd_help, &cmd_stack, &cmd_getglobal, &cmd_vmtool, &cmd_module, &cmd_console,
	&cmd_execute,
};

/* Commands of the guide that this build does not have yet. */
static const char *const planned[] = {
	"watch", "trace", "tt", "perf", "mem", "gilstat", "torch",
};

const struct cmd_spec *const *
command_all(size_t *n)
{
	*n = FP_NELEM(commands);
	return commands;
}

const struct cmd_spec *
command_find(const char *name)
{
	size_t i;

	for (i = 0; i < FP_NELEM(commands); i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

int
command_split(const char *line, char ***wordsp, size_t *np, char **cause)
{
	struct sbuf w = { 0 };
	char **words = NULL;
	size_t n = 0, alloc = 0;
	const char *p = line;
	char quote = 0;
	bool inword = false;

	for (;; p++) {
		char c = *p;

		if (c == '\0') {
			if (quote) {
				sbuf_free(&w);
				command_words_free(words, n);
				return fail(cause, FP_EUSAGE, "unterminated %c quote", quote);
			}
			break;
		}
		if (quote == '\'') {
			if (c == '\'')
				quote = 0;
			else
				sbuf_addn(&w, &c, 1);
			continue;
		}
		if (c == '\\' && p[1] != '\0' && (quote != '"' || strchr("\"\\$`", p[1]))) {
			p++;
			sbuf_addn(&w, p, 1);
			inword = true;
			continue;
		}
		if (quote == '"') {
			if (c == '"')
				quote = 0;
			else
				sbuf_addn(&w, &c, 1);
			continue;
		}
		if (c == '\'' || c == '"') {
			quote = c;
			inword = true;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			if (inword) {
				*ARRAY_PUSH(words, n, alloc) = sbuf_steal(&w);
				inword = false;
			}
			continue;
		}
		sbuf_addn(&w, &c, 1);
		inword = true;
	}
	if (inword)
		*ARRAY_PUSH(words, n, alloc) = sbuf_steal(&w);
	sbuf_free(&w);
	*wordsp = words;
	*np = n;
	return FP_OK;
}

void
command_words_free(char **words, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(words[i]);
	free(words);
}

static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, *prev, *cur, d;

	if (la > 64 || lb > 64)
		return 99;
	prev = xcalloc(lb + 1, sizeof *prev);
	cur = xcalloc(lb + 1, sizeof *cur);
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof *prev);
	}
	d = prev[lb];
	free(prev);
	free(cur);
	return d;
}

const char *
command_closest(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL;
	size_t bestd = 4, i;

	/*
	 * At most 3 edits, and never more than half the word (any word of two
	 * letters is two edits from `tt`) unless it is the start of the
	 * candidate (sta: stack).
	 */
	for (i = 0; i < n; i++) {
		size_t d = edit_distance(word, candidates[i]), len = strlen(word);

		if (d < bestd && (2 * d <= len ||
		    (d < 3 && len >= 3 && strncmp(word, candidates[i], len) == 0))) {
			best = candidates[i];
			bestd = d;
		}
	}
	return best;
}

static int
unknown_command(const char *name, char **cause)
{
	const char *names[FP_NELEM(commands) + FP_NELEM(planned)], *best;
	size_t i, n = 0;

	for (i = 0; i < FP_NELEM(planned); i++)
		if (strcmp(planned[i], name) == 0)
			return fail(cause, FP_EUSAGE,
			    "'%s' is a command of the guide that this build does not have yet; "
			    "`help` lists the ones it has", name);
	for (i = 0; i < FP_NELEM(commands); i++)
		names[n++] = commands[i]->name;
	for (i = 0; i < FP_NELEM(planned); i++)
		names[n++] = planned[i];
	best = command_closest(name, names, n);
	if (best != NULL && command_find(best) == NULL)
		return fail(cause, FP_EUSAGE, "unknown command '%s': did you mean '%s'? (a command of "
		    "the guide that this build does not have yet; `help` lists the ones it has)",
		    name, best);
	if (best != NULL)
		return fail(cause, FP_EUSAGE, "unknown command '%s': did you mean '%s'? (`help` lists commands)",
		    name, best);
	return fail(cause, FP_EUSAGE, "unknown command '%s' (`help` lists commands)", name);
}

/* "stack [pid] [-f FILE] ...", or "console" alone: no space after it. */
static const char *
usage_of(const struct cmd_spec *spec, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", spec->name, spec->usage[0] ? " " : "", spec->usage);
	return buf;
}

static int
unknown_option(const struct cmd_spec *spec, const char *word, char **cause)
{
	const char *names[32], *best;
	char usage[256];
	size_t i, n = 0;

	for (i = 0; i < spec->noptions && n + 2 < FP_NELEM(names); i++) {
		if (spec->options[i].shortname)
			names[n++] = spec->options[i].shortname;
		names[n++] = spec->options[i].longname;
	}
	/*
	 * One or two letters after one dash (-f, -nm): every short option is an
	 * edit or two away, so the closest would be a guess (-f for getglobal's
	 * -e, where the guide's watch has a -f of its own); only a different
	 * case is named.
	 */
	if (word[1] != '-' && strlen(word) <= 3) {
		for (i = 0, best = NULL; i < n && best == NULL; i++)
			if (strcasecmp(word, names[i]) == 0)
				best = names[i];
	} else {
		best = command_closest(word, names, n);
	}
	if (best != NULL)
		return fail(cause, FP_EUSAGE, "%s: unknown option '%s': did you mean '%s'? (usage: %s)",
		    spec->name, word, best, usage_of(spec, usage, sizeof usage));
	return fail(cause, FP_EUSAGE, "%s: unknown option '%s' (usage: %s)", spec->name, word,
	    usage_of(spec, usage, sizeof usage));
}

static const struct cmd_option *
find_option(const struct cmd_spec *spec, const char *word, const char **inline_value)
{
	size_t i, len;

	*inline_value = NULL;
	for (i = 0; i < spec->noptions; i++) {
		const struct cmd_option *o = &spec->options[i];

		if (o->shortname != NULL && strcmp(word, o->shortname) == 0)
			return o;
		len = strlen(o->longname);
		if (strncmp(word, o->longname, len) == 0) {
			if (word[len] == '\0')
				return o;
			if (word[len] == '=') {	/* a flag's value is refused by the caller */
				*inline_value = word + len + 1;
				return o;
			}
		}
	}
	return NULL;
}

int
command_parse(const char *line, struct cmd_request **reqp, char **cause)
{
	struct cmd_request *req;
	const struct cmd_spec *spec;
	char **words, usage[256];
	size_t n, i;
	int rc;

	*reqp = NULL;
	if ((rc = command_split(line, &words, &n, cause)) != FP_OK)
		return rc;
	if (n == 0) {
		command_words_free(words, n);
		return FP_OK;
	}
	spec = command_find(words[0]);
	if (spec == NULL) {
		rc = unknown_command(words[0], cause);
		command_words_free(words, n);
		return rc;
	}
	req = xcalloc(1, sizeof *req);
	req->spec = spec;
	for (i = 1; i < n; i++) {
		const char *w = words[i], *inl;
		const struct cmd_option *o;
		struct cmd_arg *a;

		if (strcmp(w, "--") == 0) {
			while (++i < n)
				*ARRAY_PUSH(req->args, req->nargs, req->aargs) = xstrdup(words[i]);
			break;
		}
		/* Positional: anything not starting with '-', and negative numbers. */
		if (w[0] != '-' || w[1] == '\0' || (w[1] >= '0' && w[1] <= '9')) {
			*ARRAY_PUSH(req->args, req->nargs, req->aargs) = xstrdup(w);
			continue;
		}
		o = find_option(spec, w, &inl);
		if (o == NULL) {
			rc = unknown_option(spec, w, cause);
			goto bad;
		}
		if (o->arg == NULL && inl != NULL) {
			rc = fail(cause, FP_EUSAGE, "%s: option %s takes no value (usage: %s)",
			    spec->name, o->longname, usage_of(spec, usage, sizeof usage));
			goto bad;
		}
		a = ARRAY_PUSH(req->opts, req->nopts, req->aopts);
		a->opt = o;
		a->value = NULL;
		if (o->arg != NULL) {
			if (inl != NULL) {
				a->value = xstrdup(inl);
			} else if (i + 1 < n) {
				a->value = xstrdup(words[++i]);
			} else {
				rc = fail(cause, FP_EUSAGE, "%s: option %s needs a value (%s)",
				    spec->name, w, o->arg);
				goto bad;
			}
		}
	}
	if (req->nargs < spec->min_args || req->nargs > spec->max_args) {
		unsigned want = req->nargs < spec->min_args ? spec->min_args : spec->max_args;

		rc = fail(cause, FP_EUSAGE, "%s: expected %s%u argument%s, got %zu (usage: %s)",
		    spec->name, spec->min_args == spec->max_args ? "" :
		    req->nargs < spec->min_args ? "at least " : "at most ",
		    want, want == 1 ? "" : "s", req->nargs, usage_of(spec, usage, sizeof usage));
		goto bad;
	}
	command_words_free(words, n);
	*reqp = req;
	return FP_OK;
bad:
	command_words_free(words, n);
	command_request_free(req);
	return rc;
}

void
command_request_free(struct cmd_request *req)
{
	size_t i;

	if (req == NULL)
		return;
	for (i = 0; i < req->nargs; i++)
		free(req->args[i]);
	free(req->args);
	for (i = 0; i < req->nopts; i++)
		free(req->opts[i].value);
	free(req->opts);
	free(req);
}

const char *
command_opt(const struct cmd_request *req, const char *longname)
{
	const char *v = NULL;
	size_t i;

	for (i = 0; i < req->nopts; i++)
		if (strcmp(req->opts[i].opt->longname, longname) == 0)
			v = req->opts[i].value ? req->opts[i].value : "";
	return v;
}

int
command_help(struct sbuf *out, const char *name, char **cause)
{
	const struct cmd_spec *spec;
	char usage[256];
	size_t i;

	if (name == NULL) {
		sbuf_add(out, "Commands:\n");
		for (i = 0; i < FP_NELEM(commands); i++)
			sbuf_addf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
		sbuf_add(out, "\n`help COMMAND` shows a command's options.\n");
		return FP_OK;
	}
	spec = command_find(name);
	if (spec == NULL)
		return unknown_command(name, cause);
	sbuf_addf(out, "USAGE\n  %s\n\n%s\n", usage_of(spec, usage, sizeof usage), spec->summary);
	if (spec->positional != NULL)
		sbuf_addf(out, "\nARGUMENTS\n  %s\n", spec->positional);
	if (spec->noptions > 0)
		sbuf_add(out, "\nOPTIONS\n");
	for (i = 0; i < spec->noptions; i++) {
		const struct cmd_option *o = &spec->options[i];
		char *left = xasprintf("%s%s%s%s%s", o->shortname ? o->shortname : "",
		    o->shortname ? ", " : "", o->longname, o->arg ? " " : "", o->arg ? o->arg : "");

		sbuf_addf(out, "  %-24s %s\n", left, o->help);
		free(left);
	}
	return FP_OK;
}
