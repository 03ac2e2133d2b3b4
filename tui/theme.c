#include "config.h"

#include "tui/theme.h"

#include <ctype.h>
#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "core/command.h"

#ifndef FP_THEMEDIR
#define FP_THEMEDIR NULL
#endif

#define D THEME_COLOR_DEFAULT
#define RGB THEME_RGB

static const char *const elem_names[EL__COUNT] = {
#define X(e, n) [EL_##e] = n,
	THEME_ELEMENTS(X)
#undef X
};

/*
 * The compiled-in theme (themes/default.theme must say the same: the unit
 * test compares them), and for each element the attribute that keeps it
 * visible when there is no colour at all.
 */
static const struct {
	struct theme_style style;
	unsigned mono;
} defaults[EL__COUNT] = {
	[EL_DEFAULT] = { { D, D, 0 }, 0 },
	[EL_TITLE] = { { RGB(0xff, 0xff, 0xff), RGB(0x00, 0x5f, 0x87), TA_BOLD }, TA_REVERSE },
	[EL_TITLE_ALERT] = { { RGB(0xff, 0xff, 0xff), RGB(0xaf, 0x00, 0x00), TA_BOLD }, TA_REVERSE | TA_BOLD },
	[EL_TITLE_PAUSED] = { { RGB(0x00, 0x00, 0x00), RGB(0xff, 0xaf, 0x00), TA_BOLD }, TA_REVERSE | TA_BOLD },
	[EL_BAR] = { { RGB(0x00, 0x00, 0x00), RGB(0x5f, 0xaf, 0xd7), 0 }, TA_REVERSE },
	[EL_BAR_KEY] = { { D, D, TA_BOLD }, TA_BOLD },
	[EL_STATUS] = { { D, D, 0 }, 0 },
	[EL_STATUS_ERROR] = { { RGB(0xff, 0x5f, 0x5f), D, TA_BOLD }, TA_BOLD },
	[EL_PROMPT] = { { D, D, 0 }, 0 },
	[EL_PROMPT_PREFIX] = { { RGB(0x5f, 0xaf, 0xd7), D, TA_BOLD }, TA_BOLD },
	[EL_BORDER] = { { RGB(0x58, 0x58, 0x58), D, 0 }, 0 },
	[EL_BORDER_FOCUS] = { { RGB(0x5f, 0xaf, 0xd7), D, TA_BOLD }, TA_BOLD },
	[EL_PANE_TITLE] = { { D, D, 0 }, 0 },
	[EL_PANE_TITLE_FOCUS] = { { RGB(0x5f, 0xaf, 0xd7), D, TA_BOLD }, TA_BOLD },
	[EL_HEADER] = { { D, D, TA_BOLD }, TA_BOLD },
	[EL_CURSOR] = { { RGB(0x00, 0x00, 0x00), RGB(0x5f, 0xaf, 0xd7), 0 }, TA_REVERSE },
	[EL_CURSOR_UNFOCUSED] = { { D, RGB(0x3a, 0x3a, 0x3a), 0 }, TA_UNDERLINE },
	[EL_SEARCH_MATCH] = { { RGB(0x00, 0x00, 0x00), RGB(0xff, 0xd7, 0x00), 0 }, TA_STANDOUT | TA_UNDERLINE },
	[EL_THREAD_TID] = { { RGB(0x8a, 0x8a, 0x8a), D, 0 }, 0 },
	[EL_THREAD_NAME] = { { D, D, TA_BOLD }, 0 },
	[EL_THREAD_GIL] = { { RGB(0x5f, 0xd7, 0x5f), D, TA_BOLD }, TA_BOLD },
	[EL_THREAD_WAIT_GIL] = { { RGB(0xff, 0xaf, 0x00), D, TA_BOLD }, TA_UNDERLINE },
	[EL_THREAD_RUNNING] = { { RGB(0x87, 0xd7, 0xff), D, 0 }, TA_BOLD },
	[EL_THREAD_IDLE] = { { RGB(0x8a, 0x8a, 0x8a), D, 0 }, 0 },
	[EL_THREAD_CPU] = { { D, D, 0 }, 0 },
	[EL_THREAD_CPU_HIGH] = { { RGB(0xff, 0x5f, 0x5f), D, TA_BOLD }, TA_BOLD },
	[EL_THREAD_TOP] = { { D, D, 0 }, 0 },
	[EL_STACK_FUNCTION] = { { D, D, TA_BOLD }, 0 },
	[EL_STACK_FILE] = { { RGB(0x87, 0xaf, 0xd7), D, 0 }, 0 },
	[EL_STACK_NATIVE] = { { RGB(0xaf, 0x87, 0xd7), D, 0 }, TA_DIM },
	[EL_STACK_MODULE] = { { RGB(0x8a, 0x8a, 0x8a), D, 0 }, 0 },
	[EL_STACK_ERROR] = { { RGB(0xff, 0x5f, 0x5f), D, 0 }, TA_BOLD },
	[EL_STACK_LINENO] = { { RGB(0x6c, 0x6c, 0x6c), D, 0 }, 0 },
	[EL_STACK_SOURCE] = { { D, D, 0 }, 0 },
	[EL_STACK_CURRENT_LINE] = { { RGB(0xff, 0xd7, 0x87), RGB(0x44, 0x44, 0x44), TA_BOLD }, TA_BOLD },
	[EL_STACK_LOCALS] = { { RGB(0x8a, 0x8a, 0x8a), D, 0 }, 0 },
	[EL_OUTPUT] = { { D, D, 0 }, 0 },
	[EL_HELP_KEY] = { { RGB(0x5f, 0xaf, 0xd7), D, TA_BOLD }, TA_BOLD },
	[EL_HELP_TEXT] = { { D, D, 0 }, 0 },
	[EL_HELP_SECTION] = { { D, D, TA_BOLD | TA_UNDERLINE }, TA_BOLD | TA_UNDERLINE },
	[EL_FLAME_0] = { { RGB(0x00, 0x00, 0x00), RGB(0xff, 0xaf, 0x5f), 0 }, 0 },
	[EL_FLAME_1] = { { RGB(0x00, 0x00, 0x00), RGB(0xff, 0xd7, 0x87), 0 }, 0 },
	[EL_FLAME_2] = { { RGB(0x00, 0x00, 0x00), RGB(0xd7, 0x87, 0x5f), 0 }, 0 },
	[EL_FLAME_3] = { { RGB(0x00, 0x00, 0x00), RGB(0xaf, 0xd7, 0x87), 0 }, 0 },
	[EL_FLAME_4] = { { RGB(0x00, 0x00, 0x00), RGB(0x87, 0xd7, 0xd7), 0 }, 0 },
	[EL_FLAME_5] = { { RGB(0x00, 0x00, 0x00), RGB(0xd7, 0xaf, 0xd7), 0 }, 0 },
	[EL_FLAME_MATCH] = { { RGB(0xff, 0xff, 0xff), RGB(0xaf, 0x00, 0xaf), TA_BOLD }, TA_BOLD | TA_UNDERLINE },
	[EL_FLAME_SELECTED] = { { RGB(0xff, 0xff, 0xff), RGB(0x00, 0x5f, 0x87), TA_BOLD }, TA_REVERSE },
	[EL_WATCH_TIME] = { { RGB(0x8a, 0x8a, 0x8a), D, 0 }, 0 },
	[EL_WATCH_COST] = { { RGB(0x87, 0xd7, 0xff), D, 0 }, 0 },
	[EL_WATCH_METHOD] = { { D, D, TA_BOLD }, TA_BOLD },
	[EL_WATCH_ERROR] = { { RGB(0xff, 0x5f, 0x5f), D, TA_BOLD }, TA_BOLD | TA_UNDERLINE },
	[EL_WATCH_DETAIL] = { { RGB(0xd7, 0xd7, 0xaf), D, 0 }, 0 },
	[EL_MONITOR_METHOD] = { { D, D, TA_BOLD }, TA_BOLD },
	[EL_MONITOR_FAIL] = { { RGB(0xff, 0x5f, 0x5f), D, TA_BOLD }, TA_BOLD | TA_UNDERLINE },
	[EL_MONITOR_DELTA] = { { RGB(0xff, 0xd7, 0x87), D, 0 }, 0 },
	[EL_MONITOR_TREND] = { { RGB(0x5f, 0xaf, 0xd7), D, 0 }, 0 },
};

static const char *const color_names[] = {
	"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
};

static const struct {
	const char *name;
	unsigned bit;
} attr_names[] = {
	{ "normal", 0 }, { "bold", TA_BOLD }, { "dim", TA_DIM },
	{ "underline", TA_UNDERLINE }, { "reverse", TA_REVERSE },
	{ "standout", TA_STANDOUT }, { "blink", TA_BLINK }, { "italic", TA_ITALIC },
};

const char *
theme_elem_name(enum theme_elem e)
{
	return e < EL__COUNT ? elem_names[e] : "?";
}

void
theme_default(struct theme *t)
{
	size_t i;

	for (i = 0; i < EL__COUNT; i++)
		t->style[i] = defaults[i].style;
}

static int
hexdigit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Returns false if `s` is not a colour. */
static bool
parse_color(const char *s, int *color)
{
	const char *p;
	char *end;
	long v;
	size_t i;

	if (strcmp(s, "default") == 0) {
		*color = THEME_COLOR_DEFAULT;
		return true;
	}
	for (i = 0; i < FP_NELEM(color_names); i++) {
		if (strcmp(s, color_names[i]) == 0) {
			*color = (int)i;
			return true;
		}
		if (strncmp(s, "bright-", 7) == 0 && strcmp(s + 7, color_names[i]) == 0) {
			*color = (int)i + 8;
			return true;
		}
	}
	if (s[0] == '#') {
		int rgb = 0;

		if (strlen(s) != 7)
			return false;
		for (p = s + 1; *p != '\0'; p++) {
			if (hexdigit((unsigned char)*p) < 0)
				return false;
			rgb = rgb * 16 + hexdigit((unsigned char)*p);
		}
		*color = 0x1000000 | rgb;
		return true;
	}
	p = strncmp(s, "color", 5) == 0 ? s + 5 : s;
	if (!isdigit((unsigned char)*p))
		return false;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v > 255)
		return false;
	*color = (int)v;
	return true;
}

static void
bad_line(struct sbuf *errs, const char *filename, int lineno, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
bad_line(struct sbuf *errs, const char *filename, int lineno, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (errs != NULL)
		sbuf_addf(errs, "%s:%d: %s\n", filename, lineno, msg);
	free(msg);
}

static int
find_elem(const char *name)
{
	size_t i;

	for (i = 0; i < EL__COUNT; i++)
		if (strcmp(elem_names[i], name) == 0)
			return (int)i;
	return -1;
}

static bool
parse_line(struct theme *t, char *line, const char *filename, int lineno, struct sbuf *errs)
{
	char *words[16], *save = NULL, *w;
	struct theme_style st;
	size_t n = 0, i, j;
	int e;

	for (w = strtok_r(line, " \t\r", &save); w != NULL; w = strtok_r(NULL, " \t\r", &save)) {
		/* a comment: a first word, a lone "#", or anything after the colours */
		if (*w == '#' && (n == 0 || w[1] == '\0' || n >= 4))
			break;
		if (n == FP_NELEM(words)) {
			bad_line(errs, filename, lineno, "too many words");
			return false;
		}
		words[n++] = w;
	}
	if (n == 0)
		return true;
	if (strcmp(words[0], "color") != 0) {
		bad_line(errs, filename, lineno, "unknown directive '%s' (expected 'color ELEMENT FG BG [ATTR...]')",
		    words[0]);
		return false;
	}
	if (n < 4) {
		bad_line(errs, filename, lineno, "'color' needs an element, a foreground and a background");
		return false;
	}
	if ((e = find_elem(words[1])) < 0) {
		const char *best = command_closest(words[1], elem_names, EL__COUNT);

		if (best != NULL)
			bad_line(errs, filename, lineno, "unknown element '%s': did you mean '%s'?", words[1], best);
		else
			bad_line(errs, filename, lineno, "unknown element '%s'", words[1]);
		return false;
	}
	memset(&st, 0, sizeof st);
	if (!parse_color(words[2], &st.fg)) {
		bad_line(errs, filename, lineno, "bad foreground colour '%s' (a name, 0-255 or #rrggbb)", words[2]);
		return false;
	}
	if (!parse_color(words[3], &st.bg)) {
		bad_line(errs, filename, lineno, "bad background colour '%s' (a name, 0-255 or #rrggbb)", words[3]);
		return false;
	}
	for (i = 4; i < n; i++) {
		for (j = 0; j < FP_NELEM(attr_names); j++)
			if (strcmp(words[i], attr_names[j].name) == 0)
				break;
		if (j == FP_NELEM(attr_names)) {
			bad_line(errs, filename, lineno, "unknown attribute '%s' (normal bold dim underline "
			    "reverse standout blink italic)", words[i]);
			return false;
		}
		st.attrs |= attr_names[j].bit;
	}
	t->style[e] = st;
	return true;
}

int
theme_parse(struct theme *t, const char *text, const char *filename, struct sbuf *errs)
{
	const char *p = text, *nl;
	int lineno = 0, bad = 0;
	char *line;

	while (*p != '\0') {
		nl = strchr(p, '\n');
		line = nl ? xstrndup(p, (size_t)(nl - p)) : xstrdup(p);
		lineno++;
		if (!parse_line(t, line, filename, lineno, errs))
			bad++;
		free(line);
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	return bad;
}

/* The directories searched for NAME.theme, in order, the installed one
 * last if `installed`; free with free(). */
static char **
theme_dirs(size_t *n, bool installed)
{
	char **dirs = NULL, *copy, *save = NULL, *d;
	const char *env = getenv("FLIGHT_PROFILER_THEME_PATH");
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	size_t alloc = 0;

	*n = 0;
	if (env != NULL && *env != '\0') {
		copy = xstrdup(env);
		for (d = strtok_r(copy, ":", &save); d != NULL; d = strtok_r(NULL, ":", &save))
			*ARRAY_PUSH(dirs, *n, alloc) = xstrdup(d);
		free(copy);
	}
	if (xdg != NULL && xdg[0] == '/')
		*ARRAY_PUSH(dirs, *n, alloc) = xasprintf("%s/flight_profiler/themes", xdg);
	else if (home != NULL && *home != '\0')
		*ARRAY_PUSH(dirs, *n, alloc) = xasprintf("%s/.config/flight_profiler/themes", home);
	if (installed && FP_THEMEDIR != NULL)
		*ARRAY_PUSH(dirs, *n, alloc) = xstrdup(FP_THEMEDIR);
	return dirs;
}

static const struct theme_builtin *
builtin_find(const char *name)
{
	const struct theme_builtin *b;

	for (b = theme_builtins; b->name != NULL; b++)
		if (strcmp(b->name, name) == 0)
			return b;
	return NULL;
}

/* NAME.theme in the user's directories, else NULL; free with free(). */
static char *
user_theme_path(const char *name)
{
	char **dirs, *path = NULL;
	size_t n, i;

	dirs = theme_dirs(&n, false);
	for (i = 0; i < n && path == NULL; i++) {
		char *p = xasprintf("%s/%s.theme", dirs[i], name);

		if (access(p, R_OK) == 0)
			path = p;
		else
			free(p);
	}
	strv_free(dirs, n);
	return path;
}

int
theme_load(struct theme *t, const char *name, struct sbuf *errs, char **cause)
{
	const struct theme_builtin *b;
	char *path = NULL, *text;
	int rc = FP_OK;

	theme_default(t);
	if (strcmp(name, "default") == 0)
		return FP_OK;
	if (strchr(name, '/') != NULL) {
		path = xstrdup(name);
	} else {
		if (*name == '\0' || name[0] == '.')
			return fail(cause, FP_ERR, "'%s' is not a theme name", name);
		path = user_theme_path(name);
		if (path == NULL && (b = builtin_find(name)) != NULL) {
			char *label = xasprintf("(built in) %s.theme", name);

			theme_parse(t, b->text, label, errs);
			free(label);
			return FP_OK;
		}
		if (path == NULL && FP_THEMEDIR != NULL) {
			path = xasprintf("%s/%s.theme", FP_THEMEDIR, name);
			if (access(path, R_OK) != 0) {
				free(path);
				path = NULL;
			}
		}
		if (path == NULL)
			return fail(cause, FP_ERR, "no theme named '%s' (themes: `:theme` lists them; "
			    "user themes go in $XDG_CONFIG_HOME/flight_profiler/themes/%s.theme)", name, name);
	}
	text = read_file_str(path, NULL);
	if (text == NULL)
		rc = fail(cause, FP_ERR, "cannot read theme %s: %s", path, strerror(errno));
	else
		theme_parse(t, text, path, errs);
	free(text);
	free(path);
	return rc;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **
theme_list(size_t *np)
{
	char **dirs, **names = NULL;
	size_t ndirs, n = 0, alloc = 0, i, j;
	const struct theme_builtin *b;
	struct dirent *de;
	DIR *d;

	for (b = theme_builtins; b->name != NULL; b++)
		*ARRAY_PUSH(names, n, alloc) = xstrdup(b->name);
	dirs = theme_dirs(&ndirs, true);
	for (i = 0; i < ndirs; i++) {
		if ((d = opendir(dirs[i])) == NULL)
			continue;
		while ((de = readdir(d)) != NULL) {
			size_t len = strlen(de->d_name);

			if (len > 6 && de->d_name[0] != '.' && strcmp(de->d_name + len - 6, ".theme") == 0)
				*ARRAY_PUSH(names, n, alloc) = xstrndup(de->d_name, len - 6);
		}
		closedir(d);
	}
	strv_free(dirs, ndirs);
	qsort(names, n, sizeof *names, cmp_str);
	for (i = j = 0; i < n; i++) {
		if (j > 0 && strcmp(names[j - 1], names[i]) == 0)
			free(names[i]);
		else
			names[j++] = names[i];
	}
	*np = j;
	return names;
}

/* ---- mapping colours down to what the terminal has ---------------------- */

static const unsigned char basic_rgb[16][3] = {
	{ 0, 0, 0 }, { 205, 0, 0 }, { 0, 205, 0 }, { 205, 205, 0 },
	{ 0, 0, 238 }, { 205, 0, 205 }, { 0, 205, 205 }, { 229, 229, 229 },
	{ 127, 127, 127 }, { 255, 0, 0 }, { 0, 255, 0 }, { 255, 255, 0 },
	{ 92, 92, 255 }, { 255, 0, 255 }, { 0, 255, 255 }, { 255, 255, 255 },
};

static void
palette_rgb(int i, int rgb[3])
{
	static const int level[6] = { 0, 95, 135, 175, 215, 255 };

	if (i < 16) {
		rgb[0] = basic_rgb[i][0];
		rgb[1] = basic_rgb[i][1];
		rgb[2] = basic_rgb[i][2];
	} else if (i < 232) {
		i -= 16;
		rgb[0] = level[i / 36];
		rgb[1] = level[(i / 6) % 6];
		rgb[2] = level[i % 6];
	} else {
		rgb[0] = rgb[1] = rgb[2] = 8 + 10 * (i - 232);
	}
}

static int
nearest(const int rgb[3], int from, int to)
{
	int best = from, i, c[3];
	long bestd = -1;

	for (i = from; i < to; i++) {
		long d, dr, dg, db;

		palette_rgb(i, c);
		dr = rgb[0] - c[0];
		dg = rgb[1] - c[1];
		db = rgb[2] - c[2];
		/* weighted: the eye is most sensitive to green */
		d = 3 * dr * dr + 4 * dg * dg + 2 * db * db;
		if (bestd < 0 || d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best;
}

int
theme_map_color(int color, int ncolors)
{
	int rgb[3];

	if (color == THEME_COLOR_DEFAULT || ncolors < 8)
		return THEME_COLOR_DEFAULT;
	if (THEME_IS_RGB(color)) {
		rgb[0] = (color >> 16) & 0xff;
		rgb[1] = (color >> 8) & 0xff;
		rgb[2] = color & 0xff;
		/* 16-255 only: the first 16 are often redefined by the user */
		if (ncolors >= 256)
			return nearest(rgb, 16, 256);
		return nearest(rgb, 0, ncolors >= 16 ? 16 : 8);
	}
	if (color < ncolors)
		return color;
	palette_rgb(color, rgb);
	return nearest(rgb, 0, ncolors >= 16 ? 16 : 8);
}

/* ---- curses -------------------------------------------------------------- */

static attr_t curses_attrs[EL__COUNT];

static attr_t
to_curses(unsigned a)
{
	attr_t r = A_NORMAL;

	if (a & TA_BOLD)
		r |= A_BOLD;
	if (a & TA_DIM)
		r |= A_DIM;
	if (a & TA_UNDERLINE)
		r |= A_UNDERLINE;
	if (a & TA_REVERSE)
		r |= A_REVERSE;
	if (a & TA_STANDOUT)
		r |= A_STANDOUT;
	if (a & TA_BLINK)
		r |= A_BLINK;
#ifdef A_ITALIC
	if (a & TA_ITALIC)
		r |= A_ITALIC;
#endif
	return r;
}

void
theme_apply(const struct theme *t, bool use_color)
{
	static bool defaults_ok, checked;
	int ncolors = use_color && has_colors() ? COLORS : 0;
	size_t i;

	if (ncolors > 0 && !checked) {
		checked = true;
		defaults_ok = use_default_colors() == OK;
	}
	for (i = 0; i < EL__COUNT; i++) {
		const struct theme_style *st = &t->style[i];
		int fg, bg;

		if (ncolors < 8 || (int)i + 1 >= COLOR_PAIRS) {
			curses_attrs[i] = to_curses(st->attrs | defaults[i].mono);
			continue;
		}
		fg = theme_map_color(st->fg, ncolors);
		bg = theme_map_color(st->bg, ncolors);
		if (!defaults_ok) {
			if (fg < 0)
				fg = COLOR_WHITE;
			if (bg < 0)
				bg = COLOR_BLACK;
		}
		init_pair((short)(i + 1), (short)fg, (short)bg);
		curses_attrs[i] = to_curses(st->attrs) | COLOR_PAIR((int)i + 1);
	}
}

unsigned long
theme_attr(enum theme_elem e)
{
	return curses_attrs[e];
}
