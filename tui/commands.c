/*
 * commands — what `:` runs: the TUI's own commands (quit, save, theme,
 * delay, help) and, through core/runner, every other command.
 */
#include "config.h"

#include "tui/commands.h"

#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/command.h"
#include "core/render.h"
#include "core/runner.h"
#include "tui/console.h"
#include "tui/inside.h"

static const struct local_command local_commands[] = {
	{ "quit", "", "leave (the target keeps running); also q and exit", NULL },
	{ "save", "FILE", "write the selected thread's stack to FILE", NULL },
	{ "theme", "[NAME]", "switch theme; without NAME, list them", theme_list },
	{ "delay", "SECONDS", "set the refresh interval", NULL },
};

const struct local_command *
commands_local(size_t *n)
{
	*n = FP_NELEM(local_commands);
	return local_commands;
}

/* ---- commands ---------------------------------------------------------------- */

static void
apply_theme(struct tui *t, const char *name)
{
	struct sbuf errs = { 0 };
	struct theme th;
	char *cause = NULL;

	if (theme_load(&th, name, &errs, &cause) != FP_OK) {
		tui_status(t, true, "%s", cause);
		free(cause);
		return;
	}
	t->theme = th;
	theme_apply(&t->theme, t->use_color);
	clearok(curscr, TRUE);
	if (errs.len > 0) {
		char *nl = strchr(errs.s, '\n');
		size_t more = 0, i;

		for (i = 0; i < errs.len; i++)
			more += errs.s[i] == '\n';
		if (nl != NULL)
			*nl = '\0';
		tui_status(t, true, "%s%s", errs.s, more > 1 ? " (and more; the rest of the theme loaded)" : "");
	} else {
		tui_status(t, false, "theme %s%s", name, t->use_color ? "" : " (no colours: NO_COLOR or the terminal)");
	}
	sbuf_free(&errs);
}

static void
save_stack(struct tui *t, const char *file)
{
	struct sbuf text = { 0 };
	char *path;
	FILE *f;
	const char *home = getenv("HOME");

	if (strncmp(file, "~/", 2) == 0 && home != NULL)
		path = xasprintf("%s/%s", home, file + 2);
	else
		path = xstrdup(file);
	if (tui_selected_thread(t) != NULL)
		render_thread(&text, tui_selected_thread(t), t->sc);
	if (text.len == 0) {
		tui_status(t, true, "no thread selected: nothing to save");
	} else if ((f = fopen(path, "w")) == NULL) {
		tui_status(t, true, "cannot write %s: %s", path, strerror(errno));
	} else {
		fputs(text.s, f);
		if (fclose(f) != 0)
			tui_status(t, true, "cannot write %s: %s", path, strerror(errno));
		else
			tui_status(t, false, "wrote the stack of thread %d to %s", (int)t->sel_tid, path);
	}
	free(path);
	sbuf_free(&text);
}

void
commands_run(struct tui *t, const char *line)
{
	struct sbuf out = { 0 };
	char **words = NULL, *cause = NULL;
	size_t n = 0, i;
	int rc;

	if (command_split(line, &words, &n, &cause) != FP_OK) {
		tui_status(t, true, "%s", cause);
		free(cause);
		return;
	}
	if (n == 0) {
		command_words_free(words, n);
		return;
	}
	if (strcmp(words[0], "quit") == 0 || strcmp(words[0], "q") == 0 || strcmp(words[0], "exit") == 0) {
		t->quit = true;
	} else if (strcmp(words[0], "save") == 0) {
		if (n != 2)
			tui_status(t, true, "usage: save FILE");
		else
			save_stack(t, words[1]);
	} else if (strcmp(words[0], "theme") == 0) {
		if (n == 1) {
			char **names = theme_list(&n);
			struct sbuf s = { 0 };

			for (i = 0; i < n; i++)
				sbuf_addf(&s, "%s%s", i ? " " : "", names[i]);
			tui_status(t, false, "themes: %s", s.s);
			sbuf_free(&s);
			command_words_free(names, n);
			n = 1;
		} else if (n == 2) {
			apply_theme(t, words[1]);
		} else {
			tui_status(t, true, "usage: theme [NAME]");
		}
	} else if (strcmp(words[0], "delay") == 0) {
		char *end = NULL;
		double d = n == 2 ? strtod(words[1], &end) : 0;

		if (n != 2 || end == words[1] || *end != '\0' || !(d >= 0.1 && d <= 3600)) {
			tui_status(t, true, "usage: delay SECONDS (0.1 to 3600)");
		} else {
			t->delay = d;
			t->next_refresh_ns = now_ns() + (uint64_t)(d * 1e9);
			tui_status(t, false, "refreshing every %gs", d);
		}
	} else if (strcmp(words[0], "console") == 0 || strcmp(words[0], "execute") == 0) {
		console_run(t, line, strcmp(words[0], "console") == 0);
	} else if (strcmp(words[0], "help") == 0 && n <= 2 &&
	    cmdline_help(&out, local_commands, FP_NELEM(local_commands), n == 2 ? words[1] : NULL)) {
		pane_output_set(tui_pane(t, &pane_output_ops), line, out.s);
		tui_show_pane(t, tui_pane(t, &pane_output_ops), true);
	} else {
		inside_quiesce(t);	/* the runner may use the agent's session */
		rc = runner_exec(t->runner, line, &out, &cause);
		if (out.len > 0) {
			pane_output_set(tui_pane(t, &pane_output_ops), line, out.s);
			tui_show_pane(t, tui_pane(t, &pane_output_ops), true);
		}
		if (rc != FP_OK)
			tui_status(t, true, "%s", cause ? cause : "failed");
		else if (out.len == 0)
			tui_status(t, false, "%s: done", words[0]);
	}
	command_words_free(words, n);
	free(cause);
	sbuf_free(&out);
}

