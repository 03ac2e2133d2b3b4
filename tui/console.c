/*
 * console — `console` and `execute`: the runner reads the console's lines
 * from the prompt and writes into the console pane, while the screen
 * keeps refreshing; keys typed while a statement runs interrupt it.
 */
#include "config.h"

#include "tui/console.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "core/command.h"
#include "core/runner.h"
#include "tui/inside.h"
#include "tui/layout.h"
#include "tui/panes.h"
#include "tui/prompt.h"

/* ---- console and execute: the runner reads and writes through the screen -- */


static void
console_write(void *ctx, const char *text, size_t len)
{
	struct tui *t = ctx;

	if (t->console_open)
		pane_console_write(tui_pane(t, &pane_console_ops), text, len);
	else
		pane_output_append(tui_pane(t, &pane_output_ops), text, len);
}

/*
 * The console's next line: a modal prompt on the command line, while the
 * screen goes on refreshing.  NULL at the end (Esc, Ctrl-D, the target or
 * the terminal gone); NULL with *interrupted for Ctrl-C.
 */
static char *
console_read_line(void *ctx, const char *prompt, bool *interrupted)
{
	struct tui *t = ctx;
	char *line = NULL;

	*interrupted = false;
	t->busy = false;
	if (t->console_leave || t->quit || t->exited) {
		t->console_leave = false;
		return NULL;
	}
	free(t->console_prompt);
	t->console_prompt = xstrdup(prompt);
	t->console_input = CONSOLE_WAIT;
	prompt_open(t, PROMPT_CONSOLE, NULL);
	while (t->console_input == CONSOLE_WAIT && !t->quit && !t->exited)
		tui_pump(t, false);
	t->prompt = PROMPT_NONE;
	t->dirty = true;
	if (t->console_input == CONSOLE_LINE) {
		line = t->console_line;
		t->console_line = NULL;
		inside_quiesce(t);	/* the statement needs the session */
	} else if (t->console_input == CONSOLE_INTERRUPT) {
		*interrupted = true;
	}
	return line;
}

/* While a statement runs: keep the screen alive; true interrupts it. */
static bool
console_poll(void *ctx)
{
	struct tui *t = ctx;
	bool stop;

	if (!t->busy) {
		t->busy = true;
		t->dirty = true;
	}
	tui_pump(t, true);
	stop = t->interrupt || t->quit;
	t->interrupt = false;
	return stop;
}

/* The events of trace, watch and monitor go to their panes. */
static bool
console_record(void *ctx, struct runner_record *rec)
{
	return pane_trace_record(ctx, rec) || pane_watch_record(ctx, rec) ||
	    pane_monitor_record(ctx, rec);
}

void
console_set_io(struct tui *t)
{
	runner_set_io(t->runner, &(struct runner_io){
		.read_line = console_read_line,
		.write = console_write,
		.poll = console_poll,
		.record = console_record,
		.interactive = true,
		.ctx = t,
	});
}

/* Keep a key typed before the console is ready for it: its next lines. */
void
console_type_ahead(struct tui *t, int key, bool fkey)
{
	if (t->nahead < FP_NELEM(t->ahead)) {
		t->ahead[t->nahead].key = key;
		t->ahead[t->nahead++].fkey = fkey;
	}
}

/* Keys while a statement runs: interrupt, leave, scroll. */
void
console_busy_key(struct tui *t, int key, bool fkey)
{
	t->dirty = true;
	if (fkey && key == KEY_RESIZE) {
		layout_panes(t);
	} else if (!fkey && key == CTRL('c')) {
		t->interrupt = true;
		tui_status(t, false, "interrupting the statement (KeyboardInterrupt)...");
	} else if (!fkey && key == ESC) {
		t->interrupt = true;
		t->console_leave = t->console_open;
		tui_status(t, false, "interrupting the statement%s...",
		    t->console_open ? ", then leaving the console" : "");
	} else if (fkey && (key == KEY_PPAGE || key == KEY_NPAGE)) {
		if (t->console_open)
			pane_console_scroll(tui_pane(t, &pane_console_ops), key == KEY_PPAGE ? -1 : 1);
		else
			panes_move(tui_pane(t, &pane_output_ops), key == KEY_PPAGE ? A_PAGE_UP : A_PAGE_DOWN);
	} else if (!(fkey && key == KEY_MOUSE)) {
		console_type_ahead(t, key, fkey);
	}
}

/*
 * The console shares its slot with the output pane and the ended watch,
 * trace and monitor panes: the one it hides comes back when it closes,
 * so that opening the console never loses a pane with no way back.
 */
static void
console_displace(struct tui *t, struct pane *console)
{
	struct pane *other = tui_slot_pane(t, console->ops->slot);

	if (console->visible || other == console)
		return;		/* open already (broken): keep what it hid then */
	t->console_displaced = other;
	t->console_displaced_focus = other != NULL && t->focus == other;
}

static void
console_hide(struct tui *t)
{
	struct pane *back = t->console_displaced;

	tui_hide_pane(t, tui_pane(t, &pane_console_ops));
	t->console_displaced = NULL;
	if (back != NULL && !back->visible)
		tui_show_pane(t, back, t->console_displaced_focus);
}

/*
 * The console ended on an error (a statement that did not stop after
 * Ctrl-C, a lost agent): the pane stays, with the whole message in it, and
 * keeps the keyboard (console_modal_key) until it is closed.
 */
static void
console_broke(struct tui *t, const char *cause)
{
	char *msg = xasprintf("[flight_profiler] %s", cause ? cause : "the console failed");
	struct pane *p = tui_pane(t, &pane_console_ops);
	const char *s = msg, *hint = "[typing opens a new >>> prompt; Esc closes this pane]\n";
	int w;

	tui_show_pane(t, tui_pane(t, &pane_console_ops), true);
	w = p->w > 22 ? p->w - 2 : 20;
	/* the pane does not wrap: the whole message, in lines of its width */
	pane_console_write(p, "\n", 1);
	while (*s != '\0') {
		int n = (int)strlen(s), cut = n;

		if (n > w)
			for (cut = w; cut > 0 && s[cut] != ' '; cut--)
				;
		if (cut == 0)
			cut = w;
		pane_console_write(p, s, (size_t)cut);
		pane_console_write(p, "\n", 1);
		for (s += cut; *s == ' '; s++)
			;
	}
	pane_console_write(p, hint, strlen(hint));
	free(msg);
	t->console_broken = true;
	tui_status(t, true, "the console stopped: the message is in its pane");
}

/*
 * With the pane of a console that broke focused, what is typed goes to a
 * new Python prompt (the key its first character), never to the TUI's own
 * keys; Ctrl-C and Esc close the pane instead of quitting.
 */
bool
console_modal_key(struct tui *t, int key, bool fkey)
{
	if (!t->console_broken || t->focus != tui_pane(t, &pane_console_ops) || !t->focus->visible ||
	    fkey || key == '\t')
		return false;
	if (key == ESC || key == CTRL('c')) {
		t->console_broken = false;
		console_hide(t);
		tui_status(t, false, "console closed (c opens it again)");
		return true;
	}
	if (key < ' ' || key == 127)
		return true;	/* no TUI key leaks through */
	console_type_ahead(t, key, false);
	console_run(t, "console", true);
	return true;
}

/* `console` and `execute`: the console's text goes to its pane, a
 * statement's to the output pane's history. */
void
console_run(struct tui *t, const char *line, bool console)
{
	struct pane *pane = tui_pane(t, console ? &pane_console_ops : &pane_output_ops);
	struct cmd_request *req = NULL;
	struct sbuf out = { 0 };
	char *cause = NULL;
	int rc;

	if (t->console_open || t->busy) {
		tui_status(t, true, "the console is busy: finish it first");
		return;
	}
	/* Usage errors before the agent is loaded for nothing. */
	if ((rc = command_parse(line, &req, &cause)) != FP_OK) {
		tui_status(t, true, "%s", cause);
		free(cause);
		return;
	}
	command_request_free(req);
	if (!inside_attach(t, true, false))
		return;
	inside_quiesce(t);
	if (console)
		console_displace(t, pane);
	tui_show_pane(t, pane, true);
	if (console) {
		t->console_open = true;
		t->console_leave = false;
	} else {
		pane_output_begin(pane, line);
		t->busy = true;
		tui_status(t, false, "running in process %d: Ctrl-C interrupts", (int)t->pid);
	}
	t->interrupt = false;
	t->dirty = true;
	rc = runner_exec(t->runner, line, &out, &cause);
	t->busy = false;
	t->console_open = false;
	t->console_leave = false;
	t->prompt = PROMPT_NONE;
	t->nahead = 0;
	if (out.len > 0 && console)
		pane_console_write(pane, out.s, out.len);
	else if (!console) {
		pane_output_append(pane, out.s, out.len);
		pane_output_end(pane, rc != FP_OK && !t->exited ? cause : NULL);
	}
	t->console_broken = false;
	if (t->exited) {
		;	/* take_snapshot said so */
	} else if (rc != FP_OK && console) {
		console_broke(t, cause);
	} else if (rc != FP_OK) {
		tui_status(t, true, "%s", cause ? cause : "failed");
	} else if (console) {
		console_hide(t);
		tui_status(t, false, "left the console (c opens it again; its variables are kept "
		    "while flight_profiler stays attached)");
	}
	else
		tui_status(t, false, "execute: done");
	free(cause);
	sbuf_free(&out);
	t->dirty = true;
}

