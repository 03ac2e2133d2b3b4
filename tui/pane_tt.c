/*
 * The tt pane: the time tunnel's records, as `tt -l` (or `tt -s EXPR`)
 * run from the TUI lists them, refreshed after the `tt` commands that
 * change them.  Enter
 * shows the record (`tt -i N -x 2`) in the output pane, `p` replays it
 * after a confirmation, `d` deletes it, `s` asks for a search expression,
 * `r` lists again; `/` searches the lines as in every pane.  It asks the
 * agent only when the user acts: it never loads the agent by itself.
 */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/render_tt.h"
#include "core/runner.h"
#include "tui/commands.h"
#include "tui/confirm.h"
#include "tui/prompt.h"
#include "tui/tui.h"

#define TT_EXPAND "2"	/* Enter shows a record this deep */

struct ttpane {
	struct tt_list list;
	char *search;		/* the -s expression shown, or NULL */
	bool loaded;
};

static void
tt_open(struct pane *p)
{
	p->data = xcalloc(1, sizeof(struct ttpane));
}

static void
tt_close(struct pane *p)
{
	struct ttpane *tp = p->data;

	if (tp == NULL)
		return;
	tt_list_clear(&tp->list);
	free(tp->search);
	free(tp);
	p->data = NULL;
}

/* List again (with the search in force); the status says why not. */
static void
reload(struct pane *p)
{
	struct ttpane *tp = p->data;
	char *cause = NULL;

	tt_list_clear(&tp->list);
	if (runner_tt_list(p->tui->runner, NULL, tp->search, &tp->list, &cause) != FP_OK) {
		tui_status(p->tui, true, "tt: %s", cause ? cause : "failed");
		free(cause);
	}
	tp->loaded = true;
	pane_clamp(p);
	p->tui->dirty = true;
}

void
pane_tt_after(struct pane *p, const char *line)
{
	struct ttpane *tp = p->data;
	struct cmd_request *req = NULL;
	const char *s;

	bool show, inspect;

	if (command_parse(line, &req, NULL) != FP_OK)
		return;
	/* -l and -s show the pane; what changes the records lists again
	 * quietly, so that the output pane keeps the answer in view. */
	show = command_opt(req, "--list") || command_opt(req, "--search");
	inspect = command_opt(req, "--index") && !command_opt(req, "--play");
	if (show) {
		s = command_opt(req, "--search");
		free(tp->search);
		tp->search = s ? xstrdup(s) : NULL;
	}
	command_request_free(req);
	if (inspect || (!show && !p->visible))
		return;
	reload(p);
	if (show)
		tui_show_pane(p->tui, p, true);
}

static size_t
tt_nlines(struct pane *p)
{
	return ((struct ttpane *)p->data)->list.nrows;
}

static void
tt_title(struct pane *p, struct sbuf *b)
{
	struct ttpane *tp = p->data;

	sbuf_addf(b, "tt: %zu record%s", tp->list.nrows, tp->list.nrows == 1 ? "" : "s");
	if (tp->search != NULL)
		sbuf_addf(b, " where %s", tp->search);
	if (tp->list.error_count > 0)
		sbuf_addf(b, " (raised on %lld)", tp->list.error_count);
	if (tp->loaded)
		sbuf_addf(b, ", %lld evicted", tp->list.store.evicted);
}

/* One table line of render_tt, without its newline. */
static void
row_text(struct sbuf *b, void (*fn)(struct sbuf *, const struct tt_row *),
    const struct tt_row *r)
{
	if (fn != NULL)
		fn(b, r);
	else
		render_tt_row_header(b);
	if (b->len > 0 && b->s[b->len - 1] == '\n')
		b->s[--b->len] = '\0';
}

static void
tt_header(struct pane *p, struct tline *l)
{
	struct sbuf b = { 0 };

	(void)p;
	row_text(&b, NULL, NULL);
	tline_add(l, EL_HEADER, b.s ? b.s : "");
	sbuf_free(&b);
}

static void
tt_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct ttpane *tp = p->data;
	struct sbuf b = { 0 };

	if (line >= tp->list.nrows)
		return;
	row_text(&b, render_tt_row, &tp->list.rows[line]);
	tline_add(l, tp->list.rows[line].exception ? EL_STATUS_ERROR : EL_DEFAULT, b.s ? b.s : "");
	sbuf_free(&b);
}

static long long
selected(struct pane *p)
{
	struct ttpane *tp = p->data;

	return p->cursor < tp->list.nrows ? tp->list.rows[p->cursor].index : 0;
}

static bool
tt_key(struct pane *p, enum action a)
{
	long long index = selected(p);
	char line[96], question[96];

	switch (a) {
	case A_ENTER:
		if (index == 0)
			return true;
		snprintf(line, sizeof line, "tt -i %lld -x " TT_EXPAND, index);
		commands_run(p->tui, line);
		return true;
	case A_TT_REPLAY:
		if (index == 0)
			return true;
		snprintf(question, sizeof question, "Call the method again with the arguments of "
		    "record %lld? [y/N]", index);
		if (!tui_confirm(p->tui, question))
			return true;
		snprintf(line, sizeof line, "tt -i %lld -p -x " TT_EXPAND, index);
		commands_run(p->tui, line);
		return true;
	case A_TT_DELETE:
		if (index == 0)
			return true;
		snprintf(line, sizeof line, "tt -d %lld", index);
		commands_run(p->tui, line);
		return true;
	case A_TT_SEARCH:
		prompt_open(p->tui, PROMPT_COMMAND, "tt -s ");
		return true;
	case A_REFRESH:
		reload(p);
		return true;
	default:
		return false;
	}
}

static const struct keybinding tt_keys[] = {
	{ NULL, '\n', A_ENTER, "Show", "show the record (tt -i N -x " TT_EXPAND ")" },
	{ NULL, KEY_ENTER, A_ENTER, NULL, "show the record (tt -i N -x " TT_EXPAND ")" },
	{ NULL, 'p', A_TT_REPLAY, "Replay", "call the method again with the record's arguments "
	    "(asks first)" },
	{ NULL, 'd', A_TT_DELETE, "Delete", "delete the record" },
	{ NULL, 's', A_TT_SEARCH, "Search", "the records for which an expression is true "
	    "(tt -s EXPR)" },
	{ NULL, 'r', A_REFRESH, NULL, "list the records again" },
	{ .key = 0 },
};

const struct pane_ops pane_tt_ops = {
	.name = "tt",
	.help_title = "tt pane (after a tt command)",
	.slot = SLOT_BOTTOM,
	.share = 5,
	.marker = true,
	.keys = tt_keys,
	.open = tt_open,
	.close = tt_close,
	.nlines = tt_nlines,
	.title = tt_title,
	.header = tt_header,
	.draw_line = tt_draw_line,
	.key = tt_key,
};
