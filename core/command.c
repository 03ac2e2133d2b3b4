#include "config.h"

#include "core/command.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/termsafe.h"

/* ---- the table -------------------------------------------------------------- */

static bool
named(const struct cmd_spec *spec, const char *name)
{
	size_t i;

	if (strcmp(spec->name, name) == 0)
		return true;
	for (i = 0; i < FP_NELEM(spec->aliases) && spec->aliases[i] != NULL; i++)
		if (strcmp(spec->aliases[i], name) == 0)
			return true;
	return false;
}

const struct cmd_spec *const *
command_all(size_t *n)
{
	*n = command_table_size;
	return (const struct cmd_spec *const *)command_table;
}

void
command_names_with(struct sbuf *out, unsigned flag)
{
	const struct cmd_spec *const *all;
	const struct cmd_spec *spec;
	size_t i, k, n, count = 0;

	all = command_all(&n);
	for (i = 0; i < n; i++) {
		for (k = 0; k < (all[i]->nsubs ? all[i]->nsubs : 1); k++) {
			spec = all[i]->nsubs ? all[i]->subs[k] : all[i];
			/* help looks at no process: it is no answer to "what runs over a set". */
			if ((spec->flags & flag) && strcmp(spec->name, "help") != 0)
				sbuf_addf(out, "%s%s", count++ ? ", " : "", spec->name);
		}
	}
}

const struct cmd_spec *
command_find(const char *name)
{
	size_t i, k;

	for (i = 0; i < command_table_size; i++) {
		if (named(command_table[i], name))
			return command_table[i];
		for (k = 0; k < command_table[i]->nsubs; k++)
			if (strcmp(command_table[i]->subs[k]->name, name) == 0)
				return command_table[i]->subs[k];
	}
	return NULL;
}

/* A subcommand's own word: "diff" of "mem diff". */
static const char *
sub_word(const struct cmd_spec *sub)
{
	const char *sp = strrchr(sub->name, ' ');

	return sp ? sp + 1 : sub->name;
}

void
command_bind(const char *name, cmd_run_fn *fn, void *ctx)
{
	size_t i;

	for (i = 0; i < command_table_size; i++) {
		struct cmd_spec *spec = command_table[i];

		/* Only a front end's own: core's handlers are not for replacing. */
		if (named(spec, name) && (spec->flags & (CMD_TUI | CMD_LINEMODE))) {
			spec->run = fn;
			spec->ctx = fn ? ctx : NULL;
		}
	}
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
				strv_free(words, n);
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

		bool prefix = strncmp(word, candidates[i], len) == 0;

		/* Equally close: the one the word starts (of: off, not on). */
		if (d == bestd && best != NULL && prefix && strncmp(word, best, len) != 0) {
			best = candidates[i];
			continue;
		}
		if (d < bestd && (2 * d <= len || (d < 3 && len >= 3 && prefix))) {
			best = candidates[i];
			bestd = d;
		}
	}
	return best;
}


/* ---- messages -------------------------------------------------------------- */

#define NOT_YET "is a command of the guide that this build does not have yet; " \
	"`help` lists the ones it has"

static int
unknown_command(const char *name, char **cause)
{
	const char *names[64], *best;
	const struct cmd_spec *spec;
	size_t i, n = 0;

	for (i = 0; i < command_table_size && n < FP_NELEM(names); i++)
		names[n++] = command_table[i]->name;
	best = command_closest(name, names, n);
	spec = best ? command_find(best) : NULL;
	if (spec != NULL && (spec->flags & CMD_PLANNED))
		return termsafe_fail(cause, FP_EUSAGE, "unknown command '%s': did you mean '%s'? "
		    "(a command of the guide that this build does not have yet; `help` lists the "
		    "ones it has)", name, best);
	if (best != NULL)
		return termsafe_fail(cause, FP_EUSAGE, "unknown command '%s': did you mean '%s'? "
		    "(`help` lists commands)", name, best);
	return termsafe_fail(cause, FP_EUSAGE, "unknown command '%s' (`help` lists commands)", name);
}

/* "stack [pid] [-f FILE] ...", or "console" alone: no space after it. */
static const char *
usage_of(const struct cmd_spec *spec, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", spec->name, spec->usage[0] ? " " : "", spec->usage);
	return buf;
}

/* "a, b or c" into s. */
static void
add_either(struct sbuf *s, const char *const *words, size_t n, const char *last_sep)
{
	size_t i;

	for (i = 0; i < n; i++)
		sbuf_addf(s, "%s%s", i == 0 ? "" : i + 1 == n ? last_sep : ", ", words[i]);
}

static size_t
count_words(const char *const *words)
{
	size_t n = 0;

	while (words[n] != NULL)
		n++;
	return n;
}

/* A value that is none of `choices`: "unknown action 'x': did you mean 'y'?" */
static int
bad_choice(const char *cmd, const char *what, const char *value, const char *const *choices,
    char **cause)
{
	struct sbuf s = { 0 };
	const char *best = command_closest(value, choices, count_words(choices));
	size_t i;
	int rc;

	for (i = 0; choices[i] != NULL; i++)
		if (strcasecmp(choices[i], value) == 0)
			best = choices[i];	/* GIL: gil, whatever the distance */

	if (best != NULL) {
		rc = termsafe_fail(cause, FP_EUSAGE, "%s: unknown %s '%s': did you mean '%s'?", cmd,
		    what, value, best);
	} else {
		add_either(&s, choices, count_words(choices), " or ");
		rc = termsafe_fail(cause, FP_EUSAGE, "%s: unknown %s '%s' (%s)", cmd, what, value, s.s);
		sbuf_free(&s);
	}
	return rc;
}

static int
unknown_option(const struct cmd_spec *spec, const char *word, char **cause)
{
	const char *names[64], *best;
	char usage[512];
	size_t i, n = 0;

	for (i = 0; i < spec->noptions && n + 2 < FP_NELEM(names); i++) {
		if (spec->options[i].shortname)
			names[n++] = spec->options[i].shortname;
		names[n++] = spec->options[i].longname;
	}
	/*
	 * One or two letters after one dash (-f, -nm): every short option is an
	 * edit or two away, so the closest would be a guess (-f for getglobal's
	 * -e, where watch has a -f of its own); only a different case is named.
	 */
	if (word[1] != '-' && strlen(word) <= 3) {
		for (i = 0, best = NULL; i < n && best == NULL; i++)
			if (strcasecmp(word, names[i]) == 0)
				best = names[i];
	} else {
		best = command_closest(word, names, n);
	}
	if (best != NULL)
		return termsafe_fail(cause, FP_EUSAGE, "%s: unknown option '%s': did you mean '%s'? "
		    "(usage: %s)", spec->name, word, best, usage_of(spec, usage, sizeof usage));
	return termsafe_fail(cause, FP_EUSAGE, "%s: unknown option '%s' (usage: %s)", spec->name,
	    word, usage_of(spec, usage, sizeof usage));
}

const struct cmd_spec *
command_of_line(const char *line)
{
	const struct cmd_spec *spec = NULL;
	char **words;
	size_t n, i;

	if (command_split(line, &words, &n, NULL) != FP_OK)
		return NULL;
	for (i = 0; n > 0 && i < command_table_size && spec == NULL; i++)
		if (named(command_table[i], words[0]))
			spec = command_table[i];
	strv_free(words, n);
	return spec;
}

int
command_unavailable(const struct cmd_spec *spec, char **cause)
{
	if (spec->flags & CMD_PLANNED)
		return fail(cause, FP_EUSAGE, "'%s' " NOT_YET, spec->name);
	/* A command with subcommands: the subcommand's entry answers (mem). */
	if (spec->run != NULL || spec->nsubs > 0)
		return FP_OK;
	if (spec->flags & CMD_LINEMODE)
		return fail(cause, FP_EUSAGE, "'%s' is a command of the full-screen view and the "
		    "line-mode prompt (flight_profiler PID, without --cmd)", spec->name);
	if (spec->flags & CMD_TUI)
		return fail(cause, FP_EUSAGE, "'%s' is a command of the full-screen view "
		    "(flight_profiler PID on a terminal, without --cmd)", spec->name);
	return fail(cause, FP_ERR, "%s: not implemented", spec->name);
}

/* ---- parsing --------------------------------------------------------------- */

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

/* The subcommand that words[1] names; *spec becomes it. */
static int
pick_sub(const struct cmd_spec **spec, char **words, size_t n, char **cause)
{
	const char *names[16];
	struct sbuf s = { 0 };
	const char *best;
	size_t i, k = 0;
	int rc;

	for (i = 0; i < (*spec)->nsubs && k < FP_NELEM(names); i++)
		names[k++] = sub_word((*spec)->subs[i]);
	for (i = 0; n > 1 && i < (*spec)->nsubs; i++)
		if (strcmp(words[1], names[i]) == 0) {
			*spec = (*spec)->subs[i];
			return FP_OK;
		}
	if (n < 2 || words[1][0] == '-') {
		add_either(&s, names, k, " or ");
		rc = fail(cause, FP_EUSAGE, "%s: say which: %s (`help %s` shows each)", (*spec)->name,
		    s.s, (*spec)->name);
		sbuf_free(&s);
		return rc;
	}
	if ((best = command_closest(words[1], names, k)) != NULL)
		return termsafe_fail(cause, FP_EUSAGE, "%s: unknown subcommand '%s': did you mean "
		    "'%s'? (`help %s` shows each)", (*spec)->name, words[1], best, (*spec)->name);
	add_either(&s, names, k, " or ");
	rc = termsafe_fail(cause, FP_EUSAGE, "%s: unknown subcommand '%s' (%s)", (*spec)->name,
	    words[1], s.s);
	sbuf_free(&s);
	return rc;
}

/* Options and positional arguments from words[first...] into req. */
static int
collect(struct cmd_request *req, char **words, size_t n, size_t first, char **cause)
{
	const struct cmd_spec *spec = req->spec;
	char usage[512];
	size_t i;

	for (i = first; i < n; i++) {
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
		if ((o = find_option(spec, w, &inl)) == NULL)
			return unknown_option(spec, w, cause);
		/* A flag with choices takes one inline: --group=function. */
		if (o->arg == NULL && inl != NULL && o->choices != NULL &&
		    !command_choice_ok(o->choices, inl)) {
			snprintf(usage, sizeof usage, "%s value", o->longname);
			return bad_choice(spec->name, usage, inl, o->choices, cause);
		}
		if (o->arg == NULL && inl != NULL && o->choices == NULL)
			return fail(cause, FP_EUSAGE, "%s: option %s takes no value (usage: %s)",
			    spec->name, o->longname, usage_of(spec, usage, sizeof usage));
		a = ARRAY_PUSH(req->opts, req->nopts, req->aopts);
		a->opt = o;
		a->value = o->arg == NULL && inl != NULL ? xstrdup(inl) : NULL;
		if (o->arg == NULL)
			continue;
		if (inl == NULL && i + 1 >= n)
			return fail(cause, FP_EUSAGE, "%s: option %s needs a value (%s)", spec->name, w,
			    o->arg);
		a->value = xstrdup(inl != NULL ? inl : words[++i]);
	}
	return FP_OK;
}

static size_t
required(const struct cmd_spec *spec)
{
	size_t i, n = 0;

	for (i = 0; i < spec->nparams; i++)
		if (!(spec->params[i].flags & CMD_OPTIONAL))
			n++;
	return n;
}

/* Too many, too few: the counts of positional arguments. */
static int
check_count(const struct cmd_request *req, bool with, char **cause)
{
	const struct cmd_spec *spec = req->spec;
	bool many = spec->nparams > 0 && (spec->params[spec->nparams - 1].flags & CMD_MANY);
	size_t need = required(spec), i, k;
	struct sbuf s = { 0 };
	char usage[512];
	int rc;

	usage_of(spec, usage, sizeof usage);
	if (!many && req->nargs > spec->nparams)
		return fail(cause, FP_EUSAGE, "%s: expected %s%zu argument%s, got %zu (usage: %s)",
		    spec->name, spec->nparams == 0 ? "" : "at most ", spec->nparams,
		    spec->nparams == 1 ? "" : "s", req->nargs, usage);
	if (!with && req->nargs > 0) {
		const char *inl, *after = spec->params_with;
		const struct cmd_option *o = find_option(spec, after, &inl);

		return fail(cause, FP_EUSAGE, "%s: the arguments go after %s (usage: %s)", spec->name,
		    o != NULL && o->shortname != NULL ? o->shortname : after, usage);
	}
	if (!with || req->nargs >= need)
		return FP_OK;
	/* The first nargs required ones are given (no optional one is, with too few). */
	for (i = 0, k = 0; i < spec->nparams; i++) {
		if (spec->params[i].flags & CMD_OPTIONAL)
			continue;
		if (k++ < req->nargs)
			continue;
		sbuf_addf(&s, "%s%s", s.len == 0 ? "" : k == need ? " and " : ", ",
		    spec->params[i].what);
	}
	if (req->nargs == 0)
		rc = fail(cause, FP_EUSAGE, "%s: missing %s (usage: %s)", spec->name, s.s, usage);
	else
		rc = termsafe_fail(cause, FP_EUSAGE, "%s: missing %s after %s '%s' (usage: %s)",
		    spec->name, s.s, req->params[req->nargs - 1]->name, req->args[req->nargs - 1],
		    usage);
	sbuf_free(&s);
	return rc;
}

/* What each argument is: the optional ones fill left to right with what is left over. */
static void
assign(struct cmd_request *req)
{
	const struct cmd_spec *spec = req->spec;
	size_t spare = req->nargs > required(spec) ? req->nargs - required(spec) : 0;
	size_t i, k = 0;

	req->params = xcalloc(req->nargs + 1, sizeof *req->params);
	for (i = 0; i < spec->nparams && k < req->nargs; i++) {
		if (spec->params[i].flags & CMD_OPTIONAL) {
			if (spare == 0)
				continue;
			spare--;
		}
		req->params[k++] = &spec->params[i];
	}
	/* CMD_MANY: the last one takes the rest. */
	for (; k < req->nargs && spec->nparams > 0; k++)
		req->params[k] = &spec->params[spec->nparams - 1];
}

/* Is `s` a whole number within [min, max]?  *v gets it. */
static bool
whole(const char *s, double min, double max, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return errno == 0 && end != s && *end == '\0' && (double)*v >= min && (double)*v <= max;
}

/* Is `s` a plain decimal number within [min, max] (no hex, inf or nan)? */
static bool
decimal(const char *s, double min, double max, double *v)
{
	char *end;

	if (s[0] == '\0' || s[strspn(s, "0123456789.+-eE")] != '\0')
		return false;
	errno = 0;
	*v = strtod(s, &end);
	return errno == 0 && *end == '\0' && isfinite(*v) && *v >= min && *v <= max;
}

static bool
value_fits(enum cmd_kind kind, const char *value, double min, double max)
{
	double d;
	long l;

	switch (kind) {
	case CMD_INT:
	case CMD_INDEX:
	case CMD_PID:
		return whole(value, min, max, &l);
	case CMD_LIMIT:
		return whole(value, -1, max, &l) && l != 0;
	case CMD_NUMBER:
		return decimal(value, min, max, &d);
	default:
		return true;
	}
}

/* "ACTION" -> "action", for messages. */
static const char *
lower(const char *s, char *buf, size_t size)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i + 1 < size; i++)
		buf[i] = (char)tolower((unsigned char)s[i]);
	buf[i] = '\0';
	return buf;
}

/*
 * Every value of an option or argument against its kind, bounds and
 * choices; without `numbers`, only the options' choices (which say what
 * the rest of the line means: vmtool -a).
 */
static int
check_values(const struct cmd_request *req, bool numbers, char **cause)
{
	const char *name = req->spec->name;
	char what[32];
	size_t i;

	for (i = 0; i < req->nopts; i++) {
		const struct cmd_option *o = req->opts[i].opt;
		const char *v = req->opts[i].value;

		if (v == NULL)
			continue;
		if (o->kind == CMD_CHOICE && !command_choice_ok(o->choices, v))
			return bad_choice(name, lower(o->arg, what, sizeof what), v, o->choices, cause);
		if (!numbers)
			continue;
		if (!value_fits(o->kind, v, o->min, o->max))
			return termsafe_fail(cause, FP_EUSAGE, "%s: %s wants %s, not '%s'", name,
			    o->shortname ? o->shortname : o->longname, o->want, v);
	}
	for (i = 0; numbers && i < req->nargs; i++) {
		const struct cmd_param *p = req->params[i];
		const char *v = req->args[i];
		char *end;

		if (p->kind == CMD_CHOICE && !command_choice_ok(p->choices, v))
			return bad_choice(name, p->name, v, p->choices, cause);
		if (value_fits(p->kind, v, p->min, p->max))
			continue;
		if (p->kind != CMD_PID)
			return termsafe_fail(cause, FP_EUSAGE, "%s: %s wants %s, not '%s'", name,
			    p->name, p->want, v);
		/* A word that is no number at all may be the guide's macOS `stack FILE`. */
		strtol(v, &end, 10);
		return termsafe_fail(cause, FP_EUSAGE, "%s: '%s' is not a process id%s%s", name, v,
		    end == v && *v != '-' && *v != '+' && p->want ? " " : "",
		    end == v && *v != '-' && *v != '+' && p->want ? p->want : "");
	}
	return FP_OK;
}

bool
command_choice_ok(const char *const *choices, const char *value)
{
	size_t i;

	for (i = 0; choices[i] != NULL; i++)
		if (strcmp(choices[i], value) == 0)
			return true;
	return false;
}

/*
 * After the words are sorted into options and arguments: too many, the
 * options' choices, what goes together (the command's own check), too
 * few, then each value.
 */
static int
check_request(struct cmd_request *req, char **cause)
{
	const struct cmd_spec *spec = req->spec;
	bool with = spec->params_with == NULL || command_opt(req, spec->params_with) != NULL;
	int rc;

	assign(req);
	if (req->nargs > spec->nparams && !(spec->nparams > 0 &&
	    (spec->params[spec->nparams - 1].flags & CMD_MANY)))
		return check_count(req, with, cause);
	if ((rc = check_values(req, false, cause)) != FP_OK)
		return rc;
	if (spec->check != NULL && (rc = spec->check(req, cause)) != FP_OK)
		return rc;
	if ((rc = check_count(req, with, cause)) != FP_OK)
		return rc;
	return check_values(req, true, cause);
}

int
command_parse(const char *line, struct cmd_request **reqp, char **cause)
{
	const struct cmd_spec *spec = NULL;
	struct cmd_request *req;
	char **words;
	size_t n, i;
	int rc;

	*reqp = NULL;
	if ((rc = command_split(line, &words, &n, cause)) != FP_OK)
		return rc;
	if (n == 0) {
		strv_free(words, n);
		return FP_OK;
	}
	for (i = 0; i < command_table_size && spec == NULL; i++)
		if (named(command_table[i], words[0]))
			spec = command_table[i];
	if (spec == NULL)
		rc = unknown_command(words[0], cause);
	else if (spec->nsubs > 0)
		rc = pick_sub(&spec, words, n, cause);
	if (rc != FP_OK) {
		strv_free(words, n);
		return rc;
	}
	req = xcalloc(1, sizeof *req);
	req->spec = spec;
	if ((rc = collect(req, words, n, strchr(spec->name, ' ') ? 2 : 1, cause)) == FP_OK)
		rc = check_request(req, cause);
	strv_free(words, n);
	if (rc != FP_OK) {
		command_request_free(req);
		return rc;
	}
	*reqp = req;
	return FP_OK;
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
	free(req->params);
	for (i = 0; i < req->nopts; i++)
		free(req->opts[i].value);
	free(req->opts);
	free(req);
}

/* ---- values ---------------------------------------------------------------- */

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

const char *
command_value(const struct cmd_request *req, const char *longname)
{
	const char *v = command_opt(req, longname);
	size_t i;

	for (i = 0; v == NULL && i < req->spec->noptions; i++)
		if (strcmp(req->spec->options[i].longname, longname) == 0)
			v = req->spec->options[i].dflt;
	return v;
}

long
command_int(const struct cmd_request *req, const char *longname)
{
	const char *v = command_value(req, longname);

	return v != NULL ? strtol(v, NULL, 10) : 0;
}

double
command_number(const struct cmd_request *req, const char *longname)
{
	const char *v = command_value(req, longname);

	return v != NULL ? strtod(v, NULL) : 0;
}

const char *
command_arg(const struct cmd_request *req, const char *name)
{
	size_t i;

	for (i = 0; i < req->nargs; i++)
		if (strcmp(req->params[i]->name, name) == 0)
			return req->args[i];
	return NULL;
}

/* ---- help ------------------------------------------------------------------ */

/* One section of `help`: the commands with all of `flags`, none of `not`. */
static void
help_section(struct sbuf *out, const char *title, unsigned flags, unsigned not)
{
	bool titled = false;
	size_t i;

	for (i = 0; i < command_table_size; i++) {
		const struct cmd_spec *spec = command_table[i];

		if ((spec->flags & flags) != flags || (spec->flags & not))
			continue;
		if (!titled)	/* no title over an empty section */
			sbuf_add(out, title);
		titled = true;
		sbuf_addf(out, "  %-10s %s\n", spec->name, spec->summary);
	}
}

/* "(one of a, b; default a)" after an option's or argument's help. */
static void
help_extra(struct sbuf *out, const char *const *choices, const char *dflt)
{
	if (choices == NULL && dflt == NULL)
		return;
	sbuf_add(out, " (");
	if (choices != NULL) {
		sbuf_add(out, "one of ");
		add_either(out, choices, count_words(choices), ", ");
	}
	if (dflt != NULL)
		sbuf_addf(out, "%sdefault %s", choices ? "; " : "", dflt);
	sbuf_add(out, ")");
}

static void
help_spec(struct sbuf *out, const struct cmd_spec *spec)
{
	char usage[512];
	size_t i;

	sbuf_addf(out, "USAGE\n  %s\n\n%s\n", usage_of(spec, usage, sizeof usage), spec->summary);
	if (spec->flags & CMD_PLANNED)
		sbuf_add(out, "(a command of the guide that this build does not have yet)\n");
	else if (spec->flags & CMD_TUI)
		sbuf_addf(out, "(in the full-screen view%s only)\n",
		    spec->flags & CMD_LINEMODE ? " and the line-mode prompt" : "");
	if (spec->nparams > 0)
		sbuf_add(out, "\nARGUMENTS\n");
	for (i = 0; i < spec->nparams; i++) {
		sbuf_addf(out, "  %-24s %s", spec->params[i].name, spec->params[i].help);
		help_extra(out, spec->params[i].choices, NULL);
		sbuf_add(out, "\n");
	}
	if (spec->noptions > 0)
		sbuf_add(out, "\nOPTIONS\n");
	for (i = 0; i < spec->noptions; i++) {
		const struct cmd_option *o = &spec->options[i];
		char *left = xasprintf("%s%s%s%s%s%s", o->shortname ? o->shortname : "",
		    o->shortname ? ", " : "", o->longname, o->arg ? " " : "", o->arg ? o->arg : "",
		    !o->arg && o->choices ? "[=...]" : "");

		sbuf_addf(out, "  %-24s %s", left, o->help);
		help_extra(out, o->choices, o->dflt);
		sbuf_add(out, "\n");
		free(left);
	}
}

int
command_help(struct sbuf *out, const char *name, char **cause)
{
	const struct cmd_spec *spec;
	size_t i;

	if (name == NULL) {
		help_section(out, "Commands:\n", 0, CMD_TUI | CMD_PLANNED);
		help_section(out, "\nIn the TUI too:\n", CMD_TUI, CMD_PLANNED);
		help_section(out, "\nOf the guide, not in this build yet:\n", CMD_PLANNED, 0);
		sbuf_add(out, "\n`help COMMAND` shows a command's options.\n");
		return FP_OK;
	}
	if ((spec = command_find(name)) == NULL)
		return unknown_command(name, cause);
	help_spec(out, spec);
	for (i = 0; i < spec->nsubs; i++) {
		sbuf_add(out, "\n");
		help_spec(out, spec->subs[i]);
	}
	return FP_OK;
}
