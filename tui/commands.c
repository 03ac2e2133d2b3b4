/*
 * commands — what `:` runs: every command through core/runner, which
 * dispatches by the command table; the handlers of the TUI's own entries
 * (quit, save, theme, delay) live here and are bound while the TUI runs.
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
#include "tui/statement.h"
#include "tui/stream.h"
#include "tui/inside.h"

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

/* ---- the TUI's own commands: entries of the command table, bound here ---- */

static int
cmd_quit(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct tui *t = ctx;

	(void)req;
	(void)out;
	(void)cause;
	t->quit = true;
	return FP_OK;
}

static int
cmd_save(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct tui *t = ctx;

	(void)out;
	(void)cause;
	if (t->focus != NULL && t->focus->ops->save != NULL)
		t->focus->ops->save(t->focus, command_arg(req, "file"), command_opt(req, "--format"));
	else
		save_stack(ctx, command_arg(req, "file"));
	return FP_OK;
}

static int
cmd_flame(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	const char *rate = command_opt(req, "--rate");

	(void)out;
	(void)cause;
	/* the pane says why when it cannot sample */
	tui_open(ctx, &(struct pane_event){ .kind = EV_OPEN_FLAME,
	    .line = rate != NULL ? atoi(rate) : 0 });
	return FP_OK;
}

static int
cmd_theme(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	const char *name = command_arg(req, "name");
	struct sbuf s = { 0 };
	char **names;
	size_t i, n;

	(void)out;
	(void)cause;
	if (name != NULL) {
		apply_theme(ctx, name);
		return FP_OK;
	}
	names = theme_list(&n);
	for (i = 0; i < n; i++)
		sbuf_addf(&s, "%s%s", i ? " " : "", names[i]);
	tui_status(ctx, false, "themes: %s", s.s ? s.s : "");
	sbuf_free(&s);
	strv_free(names, n);
	return FP_OK;
}

static int
cmd_delay(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct tui *t = ctx;

	(void)out;
	(void)cause;
	t->delay = strtod(command_arg(req, "seconds"), NULL);	/* the parser checked it */
	t->next_refresh_ns = now_ns() + (uint64_t)(t->delay * 1e9);
	tui_status(t, false, "refreshing every %gs", t->delay);
	return FP_OK;
}

void
commands_bind(struct tui *t)
{
	command_bind("quit", t ? cmd_quit : NULL, t);
	command_bind("save", t ? cmd_save : NULL, t);
	command_bind("theme", t ? cmd_theme : NULL, t);
	command_bind("delay", t ? cmd_delay : NULL, t);
	command_bind("flame", t ? cmd_flame : NULL, t);
}

/*
 * A command that loads the agent when it is not there (CMD_AGENT: watch,
 * trace, tt, monitor) asks first, as c does; a line it cannot parse goes
 * on to say why instead.
 */
static bool
agent_allowed(struct tui *t, const char *line)
{
	struct cmd_request *req = NULL;
	bool ask, yes = true;

	if (t->runner == NULL || t->exited || runner_procset(t->runner) != NULL ||
	    command_parse(line, &req, NULL) != FP_OK || req == NULL)
		return true;
	ask = (req->spec->flags & CMD_AGENT) && command_unavailable(req->spec, NULL) == FP_OK;
	if (ask)
		yes = inside_may_load(t, req->spec->name);
	command_request_free(req);
	return yes;
}

/*
 * The runner dispatches by the command table (to the handlers above for
 * the TUI's own); statements go to the console pane, where their output
 * streams.
 */
void
commands_run(struct tui *t, const char *line)
{
	const struct cmd_spec *spec = command_of_line(line);
	bool own = spec != NULL && (spec->flags & CMD_TUI);
	struct pane *output = tui_pane(t, &pane_output_ops);
	struct sbuf out = { 0 };
	char *cause = NULL;
	int rc;

	if (spec != NULL && (spec->flags & CMD_STATEMENT) && (spec->flags & CMD_INTERACTIVE)) {
		console_run(t, line, true);
		return;
	}
	if (spec != NULL && (spec->flags & CMD_STATEMENT)) {
		statement_start(t, line);	/* in the background: the TUI goes on */
		return;
	}
	statement_yield_output(t);	/* a background statement's text stays under its own heading */
	if (!agent_allowed(t, line))
		return;
	if (stream_is(t, line)) {
		stream_start(t, line);	/* watch, trace, monitor: in the background too */
		return;
	}
	if (!own)
		inside_quiesce(t);	/* the runner may use the agent's session */
	free(t->status);	/* what the command says, if anything, is its own */
	t->status = NULL;
	t->interrupt = false;	/* an Esc from before is not for this one */
	rc = runner_exec(t->runner, line, &out, &cause);
	t->busy = false;	/* a streaming command's poll set it (tui/console.c) */
	if (out.len > 0) {
		pane_output_set(output, line, out.s);
		tui_show_pane(t, output, true);
	}
	if (spec != NULL && strcmp(spec->name, "tt") == 0 && runner_agent_state(t->runner) ==
	    RUNNER_AGENT_ATTACHED)
		pane_tt_after(tui_pane(t, &pane_tt_ops), line);
	if (rc != FP_OK)
		tui_status(t, true, "%s", cause ? cause : "failed");
	else if (out.len == 0 && !own && spec != NULL && t->status == NULL)
		tui_status(t, false, "%s: done", spec->name);
	free(cause);
	sbuf_free(&out);
}
