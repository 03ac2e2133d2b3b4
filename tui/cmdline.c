#include "config.h"

#include "tui/cmdline.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/command.h"
#include "tui/theme.h"

#define HISTORY_MAX 1000

struct history {
	char *path;
	char **lines;
	size_t n, alloc;
};

/* ---- editing ------------------------------------------------------------- */

void
cmdline_init(struct cmdline *c, struct history *h)
{
	memset(c, 0, sizeof *c);
	c->hist = h;
	cmdline_clear(c);
}

void
cmdline_free(struct cmdline *c)
{
	sbuf_free(&c->buf);
	free(c->stash);
	c->stash = NULL;
}

void
cmdline_clear(struct cmdline *c)
{
	sbuf_free(&c->buf);
	sbuf_add(&c->buf, "");
	c->cursor = 0;
	c->hist_pos = c->hist ? history_count(c->hist) : 0;
	free(c->stash);
	c->stash = NULL;
}

const char *
cmdline_text(const struct cmdline *c)
{
	return c->buf.s ? c->buf.s : "";
}

void
cmdline_set(struct cmdline *c, const char *text)
{
	sbuf_free(&c->buf);
	sbuf_add(&c->buf, text);
	c->cursor = c->buf.len;
}

void
cmdline_insert(struct cmdline *c, const char *s)
{
	size_t n = strlen(s);
	struct sbuf b = { 0 };

	sbuf_addn(&b, c->buf.s, c->cursor);
	sbuf_addn(&b, s, n);
	sbuf_add(&b, c->buf.s + c->cursor);
	sbuf_free(&c->buf);
	c->buf = b;
	c->cursor += n;
}

static size_t
prev_char(const struct cmdline *c, size_t i)
{
	if (i == 0)
		return 0;
	i--;
	while (i > 0 && (c->buf.s[i] & 0xc0) == 0x80)
		i--;
	return i;
}

static size_t
next_char(const struct cmdline *c, size_t i)
{
	if (i >= c->buf.len)
		return c->buf.len;
	i++;
	while (i < c->buf.len && (c->buf.s[i] & 0xc0) == 0x80)
		i++;
	return i;
}

static void
erase(struct cmdline *c, size_t from, size_t to)
{
	memmove(c->buf.s + from, c->buf.s + to, c->buf.len - to + 1);
	c->buf.len -= to - from;
	c->cursor = from;
}

void
cmdline_backspace(struct cmdline *c)
{
	if (c->cursor > 0)
		erase(c, prev_char(c, c->cursor), c->cursor);
}

void
cmdline_delete(struct cmdline *c)
{
	size_t save = c->cursor;

	if (c->cursor < c->buf.len) {
		erase(c, c->cursor, next_char(c, c->cursor));
		c->cursor = save;
	}
}

void
cmdline_left(struct cmdline *c)
{
	c->cursor = prev_char(c, c->cursor);
}

void
cmdline_right(struct cmdline *c)
{
	c->cursor = next_char(c, c->cursor);
}

void
cmdline_home(struct cmdline *c)
{
	c->cursor = 0;
}

void
cmdline_end(struct cmdline *c)
{
	c->cursor = c->buf.len;
}

void
cmdline_kill_end(struct cmdline *c)
{
	c->buf.len = c->cursor;
	c->buf.s[c->cursor] = '\0';
}

void
cmdline_kill_start(struct cmdline *c)
{
	erase(c, 0, c->cursor);
}

void
cmdline_kill_word(struct cmdline *c)
{
	size_t i = c->cursor;

	while (i > 0 && c->buf.s[i - 1] == ' ')
		i--;
	while (i > 0 && c->buf.s[i - 1] != ' ')
		i--;
	erase(c, i, c->cursor);
}

void
cmdline_history_prev(struct cmdline *c)
{
	if (c->hist == NULL || c->hist_pos == 0)
		return;
	if (c->hist_pos == history_count(c->hist)) {
		free(c->stash);
		c->stash = xstrdup(cmdline_text(c));
	}
	c->hist_pos--;
	cmdline_set(c, history_get(c->hist, c->hist_pos));
}

void
cmdline_history_next(struct cmdline *c)
{
	if (c->hist == NULL || c->hist_pos >= history_count(c->hist))
		return;
	c->hist_pos++;
	if (c->hist_pos == history_count(c->hist))
		cmdline_set(c, c->stash ? c->stash : "");
	else
		cmdline_set(c, history_get(c->hist, c->hist_pos));
}

/* ---- history ------------------------------------------------------------- */

char *
history_default_path(void)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

	if (xdg != NULL && xdg[0] == '/')
		return xasprintf("%s/flight_profiler/history", xdg);
	if (home != NULL && home[0] == '/')
		return xasprintf("%s/.local/state/flight_profiler/history", home);
	return NULL;
}

static void
push(struct history *h, const char *line)
{
	if (h->n > 0 && strcmp(h->lines[h->n - 1], line) == 0)
		return;
	if (h->n == HISTORY_MAX) {
		free(h->lines[0]);
		memmove(h->lines, h->lines + 1, (h->n - 1) * sizeof *h->lines);
		h->n--;
	}
	*ARRAY_PUSH(h->lines, h->n, h->alloc) = xstrdup(line);
}

struct history *
history_open(const char *path)
{
	struct history *h = xcalloc(1, sizeof *h);
	char *text, *p, *nl;

	if (path == NULL)
		return h;
	h->path = xstrdup(path);
	if ((text = read_file_str(path, NULL)) == NULL)
		return h;
	for (p = text; *p != '\0'; p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p) - 1;
		else
			*nl = '\0';
		if (*p != '\0')
			push(h, p);
		if (nl[1] == '\0')
			break;
	}
	free(text);
	return h;
}

/* mkdir -p for the parent of path, mode 0700. */
static void
make_parent(const char *path)
{
	char *dir = xstrdup(path), *p;

	if ((p = strrchr(dir, '/')) != NULL)
		*p = '\0';
	for (p = dir + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(dir, 0700);
		*p = '/';
	}
	mkdir(dir, 0700);
	free(dir);
}

/* Rewrite the file with the newest HISTORY_MAX lines, atomically. */
static void
history_save(struct history *h)
{
	char *tmp;
	FILE *f;
	size_t i;

	if (h->path == NULL)
		return;
	make_parent(h->path);
	tmp = xasprintf("%s.%d.tmp", h->path, (int)getpid());
	if ((f = fopen(tmp, "w")) == NULL) {
		free(tmp);
		return;
	}
	fchmod(fileno(f), 0600);
	for (i = 0; i < h->n; i++)
		fprintf(f, "%s\n", h->lines[i]);
	if (fclose(f) == 0)
		rename(tmp, h->path);
	else
		unlink(tmp);
	free(tmp);
}

void
history_add(struct history *h, const char *line)
{
	const char *p;

	for (p = line; *p == ' ' || *p == '\t'; p++)
		;
	if (*p == '\0' || strchr(line, '\n') != NULL)
		return;
	push(h, line);
	history_save(h);
}

size_t
history_count(const struct history *h)
{
	return h->n;
}

const char *
history_get(const struct history *h, size_t i)
{
	return i < h->n ? h->lines[i] : "";
}

void
history_close(struct history *h)
{
	size_t i;

	if (h == NULL)
		return;
	for (i = 0; i < h->n; i++)
		free(h->lines[i]);
	free(h->lines);
	free(h->path);
	free(h);
}

/* ---- completion ---------------------------------------------------------- */

struct cands {
	char **v;
	size_t n, alloc;
};

static void
cand(struct cands *c, const char *word, const char *prefix)
{
	size_t i;

	if (word == NULL || strncmp(word, prefix, strlen(prefix)) != 0)
		return;
	for (i = 0; i < c->n; i++)
		if (strcmp(c->v[i], word) == 0)
			return;
	*ARRAY_PUSH(c->v, c->n, c->alloc) = xstrdup(word);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const struct cmd_option *
find_option(const struct cmd_spec *spec, const char *word)
{
	size_t i;

	for (i = 0; i < spec->noptions; i++)
		if ((spec->options[i].shortname && strcmp(word, spec->options[i].shortname) == 0) ||
		    strcmp(word, spec->options[i].longname) == 0)
			return &spec->options[i];
	return NULL;
}

/*
 * Which names in the process the positional argument `npos` is, from the
 * kinds in the command table: a module, then (module [class] method) a
 * class or a member of the module, then a member of that class.
 */
static int
names_kind(const struct cmd_spec *spec, size_t npos)
{
	const struct cmd_param *p, *before;

	if (npos >= spec->nparams)
		return -1;
	p = &spec->params[npos];
	before = npos > 0 ? &spec->params[npos - 1] : NULL;
	switch (p->kind) {
	case CMD_MODULE:
		return NAMES_MODULES;
	case CMD_CLASS:
		return p->flags & CMD_OPTIONAL ? NAMES_MEMBERS : NAMES_CLASSES;
	case CMD_METHOD:
	case CMD_FIELD:
		return before != NULL && before->kind == CMD_CLASS ? NAMES_CLASS_MEMBERS :
		    NAMES_MEMBERS;
	default:
		return -1;
	}
}

/* Names in the process for positional argument `npos` of `spec`, into cs. */
static void
complete_names(struct cands *cs, const struct cmd_spec *spec, char **pos, size_t npos,
    const char *prefix, const struct cmdline_namer *namer, char **note)
{
	char **names, *why = NULL;
	size_t i, n;
	int kind = names_kind(spec, npos);

	if (kind < 0)
		return;
	if (namer == NULL || namer->names == NULL) {
		*note = xstrdup("module, class and function names complete once the agent is attached");
		return;
	}
	names = namer->names(namer->ctx, (enum cmdline_names)kind, npos > 0 ? pos[0] : NULL,
	    npos > 1 ? pos[1] : NULL, prefix, &n, &why);
	if (names == NULL) {
		*note = why ? why : xstrdup("module, class and function names complete once the agent "
		    "is attached (L attaches it)");
		return;
	}
	for (i = 0; i < n; i++)
		cand(cs, names[i], prefix);
	strv_free(names, n);
	if (cs->n == 0)
		*note = xasprintf("no %s starting with '%s'", kind == NAMES_MODULES ? "imported module" :
		    kind == NAMES_CLASSES ? "class" : "name", prefix);
}

static bool
listable(enum cmd_kind kind)
{
	return kind == CMD_CHOICE || kind == CMD_COMMAND || kind == CMD_THEME;
}

/* Words a value of `kind` can be that we know without the process. */
static void
complete_value(struct cands *cs, enum cmd_kind kind, const char *const *choices,
    const char *prefix)
{
	const struct cmd_spec *const *all;
	char **words;
	size_t i, n;

	switch (kind) {
	case CMD_CHOICE:
		for (i = 0; choices[i] != NULL; i++)
			cand(cs, choices[i], prefix);
		break;
	case CMD_COMMAND:
		all = command_all(&n);
		for (i = 0; i < n; i++)
			cand(cs, all[i]->name, prefix);
		break;
	case CMD_THEME:
		words = theme_list(&n);
		for (i = 0; i < n; i++)
			cand(cs, words[i], prefix);
		strv_free(words, n);
		break;
	default:
		break;
	}
}

/* What the word being typed can be, after the words before it. */
static void
complete_word(struct cands *cs, const struct cmd_spec *spec, const struct cmd_option *takes,
    char **pos, size_t npos, const char *prefix, const struct cmdline_namer *namer, char **note)
{
	size_t i;

	if (takes != NULL) {
		complete_value(cs, takes->kind, takes->choices, prefix);
	} else if (spec->nsubs > 0) {
		for (i = 0; npos == 0 && i < spec->nsubs; i++)
			cand(cs, strrchr(spec->subs[i]->name, ' ') + 1, prefix);
	} else if (prefix[0] == '-') {
		for (i = 0; i < spec->noptions; i++) {
			cand(cs, spec->options[i].longname, prefix);
			if (strlen(prefix) <= 2)
				cand(cs, spec->options[i].shortname, prefix);
		}
	} else if (npos < spec->nparams && listable(spec->params[npos].kind)) {
		complete_value(cs, spec->params[npos].kind, spec->params[npos].choices, prefix);
	} else {
		complete_names(cs, spec, pos, npos, prefix, namer, note);
	}
}

char **
cmdline_complete(struct cmdline *c, const struct cmdline_namer *namer, size_t *np, char **note)
{
	const struct cmd_spec *const *all, *spec = NULL, *sub;
	struct cands cs = { 0 };
	const struct cmd_option *takes = NULL;	/* the last word wants a value */
	char *before, *prefix, *save = NULL, *w;
	char **pos = NULL;
	size_t start, nall, i, nwords = 0, common, npos = 0, apos = 0;

	*np = 0;
	*note = NULL;
	before = xstrndup(cmdline_text(c), c->cursor);
	for (start = c->cursor; start > 0 && before[start - 1] != ' '; start--)
		;
	prefix = xstrdup(before + start);
	before[start] = '\0';
	for (w = strtok_r(before, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save)) {
		const struct cmd_option *o;
		char *full;

		if (nwords++ == 0) {
			spec = command_find(w);
		} else if (spec == NULL) {
			;
		} else if (takes != NULL) {
			takes = NULL;	/* the option's value */
		} else if (spec->nsubs > 0 && npos == 0) {
			/* mem summary: from here on, the subcommand's options and arguments */
			full = xasprintf("%s %s", spec->name, w);
			sub = command_find(full);
			free(full);
			if (sub != NULL)
				spec = sub;
			else
				*ARRAY_PUSH(pos, npos, apos) = w;
		} else if (w[0] == '-' && (o = find_option(spec, w)) != NULL) {
			if (o->arg != NULL)
				takes = o;
		} else {
			*ARRAY_PUSH(pos, npos, apos) = w;
		}
	}

	if (nwords == 0) {
		all = command_all(&nall);
		for (i = 0; i < nall; i++)
			cand(&cs, all[i]->name, prefix);
	} else if (spec != NULL) {
		complete_word(&cs, spec, takes, pos, npos, prefix, namer, note);
	}
	free(pos);
	free(before);
	if (cs.n > 1)
		qsort(cs.v, cs.n, sizeof *cs.v, cmp_str);

	if (cs.n == 1) {
		c->cursor = start + strlen(prefix);
		erase(c, start, c->cursor);
		cmdline_insert(c, cs.v[0]);
		if (c->buf.s[c->cursor] != ' ')
			cmdline_insert(c, " ");
	} else if (cs.n > 1) {
		common = strlen(cs.v[0]);
		for (i = 1; i < cs.n; i++) {
			size_t k = 0;

			while (k < common && cs.v[i][k] == cs.v[0][k])
				k++;
			common = k;
		}
		if (common > strlen(prefix)) {
			char *ins = xstrndup(cs.v[0], common);

			c->cursor = start + strlen(prefix);
			erase(c, start, c->cursor);
			cmdline_insert(c, ins);
			free(ins);
		}
	}
	free(prefix);
	*ARRAY_PUSH(cs.v, cs.n, cs.alloc) = NULL;
	*np = cs.n - 1;
	return cs.v;
}
