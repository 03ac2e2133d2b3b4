/*
 * Every theme in themes/ parses with no error and sets every element; the
 * compiled-in default equals themes/default.theme; a bad line is reported
 * as file:line: message and the rest still loads; colours map down to what
 * a terminal has.
 */
#include "config.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "tests/unit/tap.h"
#include "tui/theme.h"

static const char *
srcdir(void)
{
	const char *s = getenv("FP_SRCDIR");

	return s != NULL && *s != '\0' ? s : ".";
}

/* Which elements a theme text names. */
static void
elements_named(const char *text, bool *seen)
{
	const char *p = text;
	size_t i;

	while (p != NULL && *p != '\0') {
		char word[64] = "", elem[64] = "";

		if (sscanf(p, "%63s %63s", word, elem) == 2 && strcmp(word, "color") == 0)
			for (i = 0; i < EL__COUNT; i++)
				if (strcmp(theme_elem_name((enum theme_elem)i), elem) == 0)
					seen[i] = true;
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
}

static void
shipped_themes(void)
{
	char *dir = xasprintf("%s/themes", srcdir());
	struct dirent *de;
	DIR *d = opendir(dir);
	int count = 0;

	if (!ok(d != NULL, "themes/ can be listed (%s)", dir)) {
		free(dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name), i;
		struct sbuf errs = { 0 };
		struct theme t;
		char *path, *text;
		bool seen[EL__COUNT] = { false }, all = true;
		int bad;

		if (len < 7 || strcmp(de->d_name + len - 6, ".theme") != 0)
			continue;
		count++;
		path = xasprintf("%s/%s", dir, de->d_name);
		text = read_file_str(path, NULL);
		if (!ok(text != NULL, "%s is readable", de->d_name)) {
			free(path);
			continue;
		}
		theme_default(&t);
		bad = theme_parse(&t, text, path, &errs);
		ok(bad == 0 && errs.len == 0, "%s parses with no error", de->d_name) ||
		    (diag("%s", errs.s ? errs.s : ""), 0);
		elements_named(text, seen);
		for (i = 0; i < EL__COUNT; i++)
			if (!seen[i]) {
				diag("%s does not set %s", de->d_name, theme_elem_name((enum theme_elem)i));
				all = false;
			}
		ok(all, "%s sets every element", de->d_name);
		if (strcmp(de->d_name, "default.theme") == 0) {
			struct theme compiled;

			theme_default(&compiled);
			ok(memcmp(&compiled, &t, sizeof t) == 0,
			    "themes/default.theme says what the compiled-in default does");
		}
		sbuf_free(&errs);
		free(text);
		free(path);
	}
	closedir(d);
	ok(count >= 4, "themes/ has the four shipped themes (found %d)", count);
	free(dir);
}

static void
bad_lines(void)
{
	struct sbuf errs = { 0 };
	struct theme t, def;
	int bad;

	theme_default(&t);
	theme_default(&def);
	bad = theme_parse(&t,
	    "# a comment\n"
	    "color title red blue bold\n"
	    "color no.such red blue\n"
	    "colour bar red blue\n"
	    "color bar.key #zzzzzz default\n"
	    "color bar.key red default blinking\n"
	    "color stack.file\n"
	    "color stak.file red default\n"
	    "color status.error #ff0000 default underline # trailing comment\n"
	    "\n"
	    "color bar 200 color17\n",
	    "my.theme", &errs);
	is_int(bad, 6, "six bad lines are counted");
	ok(strstr(errs.s, "my.theme:3: unknown element 'no.such'\n") != NULL, "line 3: unknown element");
	ok(strstr(errs.s, "my.theme:4: unknown directive 'colour'") != NULL, "line 4: unknown directive");
	ok(strstr(errs.s, "my.theme:5: bad foreground colour '#zzzzzz'") != NULL, "line 5: bad colour");
	ok(strstr(errs.s, "my.theme:6: unknown attribute 'blinking'") != NULL, "line 6: bad attribute");
	ok(strstr(errs.s, "my.theme:7: 'color' needs") != NULL, "line 7: missing words");
	ok(strstr(errs.s, "my.theme:8: unknown element 'stak.file': did you mean 'stack.file'?") != NULL,
	    "line 8: a suggestion for a typo");
	ok(strstr(errs.s, "my.theme:1") == NULL && strstr(errs.s, "my.theme:2") == NULL &&
	    strstr(errs.s, "my.theme:9") == NULL, "good lines and comments are not reported") ||
	    (diag("%s", errs.s), 0);
	ok(t.style[EL_TITLE].fg == 1 && t.style[EL_TITLE].bg == 4 && t.style[EL_TITLE].attrs == TA_BOLD,
	    "the good line before the bad ones is applied");
	ok(t.style[EL_STATUS_ERROR].fg == THEME_RGB(0xff, 0, 0) &&
	    t.style[EL_STATUS_ERROR].attrs == TA_UNDERLINE, "#rrggbb and a trailing comment");
	ok(t.style[EL_BAR].fg == 200 && t.style[EL_BAR].bg == 17, "palette numbers, with and without 'color'");
	ok(memcmp(&t.style[EL_BAR_KEY], &def.style[EL_BAR_KEY], sizeof t.style[0]) == 0,
	    "a bad line leaves its element as it was");
	sbuf_free(&errs);
}

static void
load_by_name(void)
{
	struct sbuf errs = { 0 };
	struct theme t;
	char *cause = NULL, *dirs = xasprintf("%s/themes", srcdir()), **names;
	size_t n, i;
	bool light = false;

	setenv("FLIGHT_PROFILER_THEME_PATH", dirs, 1);
	is_int(theme_load(&t, "light", &errs, &cause), FP_OK, "theme_load finds 'light' on the theme path");
	is_int(theme_load(&t, "nonesuch", &errs, &cause), FP_ERR, "an unknown theme is an error");
	ok(cause != NULL && strstr(cause, "no theme named 'nonesuch'") != NULL, "which says so") ||
	    (diag("%s", cause ? cause : "(null)"), 0);
	is_int(theme_load(&t, "default", &errs, &cause), FP_OK, "'default' needs no file");
	names = theme_list(&n);
	for (i = 0; i < n; i++)
		light |= strcmp(names[i], "light") == 0;
	ok(light && n >= 4, "theme_list lists the shipped themes");
	strv_free(names, n);
	free(cause);
	free(dirs);
	sbuf_free(&errs);
}

static void
mapping(void)
{
	is_int(theme_map_color(THEME_RGB(0x5f, 0xaf, 0xd7), 256), 74, "#5fafd7 is 74 of 256");
	is_int(theme_map_color(THEME_RGB(0x44, 0x44, 0x44), 256), 238, "#444444 is grey 238");
	is_int(theme_map_color(THEME_RGB(0xff, 0x00, 0x00), 16), 9, "#ff0000 is bright red of 16");
	is_int(theme_map_color(THEME_RGB(0xcd, 0x00, 0x00), 8), 1, "#cd0000 is red of 8");
	is_int(theme_map_color(196, 8), 1, "palette 196 is red of 8");
	is_int(theme_map_color(12, 8), 4, "bright blue is blue of 8");
	is_int(theme_map_color(12, 16), 12, "bright blue stays of 16");
	is_int(theme_map_color(THEME_COLOR_DEFAULT, 256), THEME_COLOR_DEFAULT, "default stays default");
	is_int(theme_map_color(3, 0), THEME_COLOR_DEFAULT, "no colours at all: default");
}

int
main(void)
{
	shipped_themes();
	bad_lines();
	load_by_name();
	mapping();
	return done_testing();
}
