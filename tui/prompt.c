/*
 * prompt — the bottom line's prompts: `:` commands, `/` search, `\\` filter
 * and the console's `>>> `, with their editing keys and histories.
 */
#include "config.h"

#include "tui/prompt.h"

#include <curses.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "core/command.h"
#include "core/regex.h"
#include "tui/bars.h"
#include "tui/commands.h"
#include "tui/inside.h"
#include "tui/layout.h"

/* ---- search -------------------------------------------------------------------- */

static pcre2_code *
compile(const char *pattern, char **cause)
{
	return regex_compile(pattern, regex_smart_case(pattern), "search pattern", cause);
}

void
prompt_search(struct tui *t, bool forward)
{
	struct pane *p = t->focus;
	size_t n = p->ops->nlines(p), k, i;
	pcre2_match_data *md;
	struct tline l = { 0 };
	bool wrapped = false;

	if (t->search_re == NULL) {
		tui_status(t, true, "no search yet: / searches");
		return;
	}
	if (p->ops->search != NULL) {
		p->ops->search(p, forward);	/* a pane whose matches are not lines */
		return;
	}
	md = pcre2_match_data_create_from_pattern(t->search_re, NULL);
	for (k = 1; k <= n; k++) {
		i = forward ? (p->cursor + k) % n : (p->cursor + n - k % n) % n;
		if (forward ? i <= p->cursor : i >= p->cursor)
			wrapped = true;
		tline_reset(&l);
		p->ops->draw_line(p, i, &l);
		if (pcre2_match(t->search_re, (PCRE2_SPTR)(l.text.s ? l.text.s : ""), l.text.len, 0, 0,
		    md, NULL) >= 0) {
			size_t rows = (size_t)pane_rows(p);

			p->cursor = i;
			if (i < p->top || i >= p->top + rows)
				p->top = i > rows / 2 ? i - rows / 2 : 0;
			pane_set_cursor(p, i);
			if (wrapped)
				tui_status(t, false, "search wrapped around: %s", t->search);
			else
				tui_status(t, false, "/%s", t->search);
			break;
		}
	}
	if (k > n)
		tui_status(t, true, "pattern not found in this pane: %s", t->search);
	pcre2_match_data_free(md);
	tline_free(&l);
}

static void
prompt_enter(struct tui *t)
{
	char *text = xstrdup(cmdline_text(&t->edit));
	char *cause = NULL;
	int mode = t->prompt;

	t->prompt = PROMPT_NONE;
	t->dirty = true;
	if (mode == PROMPT_CONSOLE) {
		pane_console_echo(tui_pane(t, &pane_console_ops), t->console_prompt, text);
		history_add(t->console_history, text);
		t->console_line = text;
		t->console_input = CONSOLE_LINE;
		return;
	}
	if (mode == PROMPT_COMMAND) {
		history_add(t->history, text);
		commands_run(t, text);
	} else if (mode == PROMPT_SEARCH) {
		history_add(t->search_history, text);
		if (*text == '\0' && t->search != NULL) {
			prompt_search(t, true);	/* an empty pattern repeats the last one */
		} else if (*text != '\0') {
			pcre2_code *re = compile(text, &cause);

			if (re == NULL) {
				tui_status(t, true, "%s", cause);
			} else {
				pcre2_code_free(t->search_re);
				free(t->search);
				t->search_re = re;
				t->search = xstrdup(text);
				prompt_search(t, true);
			}
		}
	} else if (mode == PROMPT_FILTER) {
		history_add(t->filter_history, text);
		if (t->focus->ops->filter == NULL)
			;	/* the focus cannot move while the prompt is open */
		else if (!t->focus->ops->filter(t->focus, text, &cause))
			tui_status(t, true, "%s", cause);
		else if (*text != '\0')
			tui_status(t, false, "%s matching /%s/ (\\ then Enter on an empty line shows all)",
			    t->focus->ops->name, text);
		else
			tui_status(t, false, "all %s", t->focus->ops->name);
		pane_clamp(t->focus);
	}
	free(cause);
	free(text);
}

void
prompt_open(struct tui *t, int mode, const char *text)
{
	t->prompt = mode;
	cmdline_clear(&t->edit);
	t->edit.hist = mode == PROMPT_COMMAND ? t->history : mode == PROMPT_CONSOLE ?
	    t->console_history : mode == PROMPT_SEARCH ? t->search_history : t->filter_history;
	t->edit.hist_pos = t->edit.hist ? history_count(t->edit.hist) : 0;
	if (text != NULL)
		cmdline_set(&t->edit, text);
	t->dirty = true;
}

/* Keys of the console's prompt that differ from the command line's. */
static bool
console_prompt_key(struct tui *t, int key, bool fkey)
{
	struct cmdline *c = &t->edit;

	if (fkey) {
		if (key == KEY_PPAGE || key == KEY_NPAGE) {
			pane_console_scroll(tui_pane(t, &pane_console_ops), key == KEY_PPAGE ? -1 : 1);
			return true;
		}
		return key == KEY_BACKSPACE && c->buf.len == 0;
	}
	switch (key) {
	case ESC:
	case CTRL('g'):
		/* leave; a block being typed is dropped, not run */
		if (strcmp(t->console_prompt, ">>> ") != 0) {
			t->console_input = CONSOLE_INTERRUPT;
			t->console_leave = true;
		} else {
			t->console_input = CONSOLE_EOF;
		}
		return true;
	case CTRL('d'):
		if (c->buf.len > 0)
			return false;
		t->console_input = CONSOLE_EOF;
		return true;
	case CTRL('c'):
		t->console_input = CONSOLE_INTERRUPT;
		return true;
	case '\t':
		/* indentation, as Python's own console does */
		do
			cmdline_insert(c, " ");
		while (text_width(cmdline_text(c), c->cursor) % 4 != 0);
		return true;
	case 127:
	case CTRL('h'):
		return c->buf.len == 0;
	default:
		return false;
	}
}

/* A function key (curses KEY_*) while a prompt is open. */
static void
prompt_fkey(struct tui *t, int key)
{
	struct cmdline *c = &t->edit;

	switch (key) {
	case KEY_ENTER:
		prompt_enter(t);
		return;
	case KEY_BACKSPACE:
		if (c->buf.len == 0)
			t->prompt = PROMPT_NONE;
		cmdline_backspace(c);
		return;
	case KEY_DC:
		cmdline_delete(c);
		return;
	case KEY_LEFT:
		cmdline_left(c);
		return;
	case KEY_RIGHT:
		cmdline_right(c);
		return;
	case KEY_HOME:
		cmdline_home(c);
		return;
	case KEY_END:
		cmdline_end(c);
		return;
	case KEY_UP:
		cmdline_history_prev(c);
		return;
	case KEY_DOWN:
		cmdline_history_next(c);
		return;
	case KEY_RESIZE:
		layout_panes(t);
		return;
	default:
		return;
	}
}

/* Tab on the command line: complete, or list the candidates in the bar. */
static void
complete(struct tui *t)
{
	struct cmdline *c = &t->edit;
	struct cmdline_namer namer = { inside_names, t };
	char *note;
	size_t n, i;
	char **cands = cmdline_complete(c, &namer, &n, &note);

	if (n > 1) {
		struct sbuf s = { 0 };

		for (i = 0; i < n; i++)
			sbuf_addf(&s, "%s%s", i ? "  " : " ", cands[i]);
		bars_menu_set(sbuf_steal(&s));
	} else if (n == 0 && note != NULL) {
		/* the prompt hides the status line: say it in the bar */
		bars_menu_set(xasprintf(" %s", note));
	}
	free(note);
	strv_free(cands, n);
}

void
prompt_key(struct tui *t, int key, bool fkey)
{
	struct cmdline *c = &t->edit;

	t->dirty = true;
	if (t->prompt == PROMPT_CONSOLE && console_prompt_key(t, key, fkey))
		return;
	if (fkey) {
		prompt_fkey(t, key);
		return;
	}
	switch (key) {
	case '\n':
	case '\r':
		prompt_enter(t);
		return;
	case ESC:
	case CTRL('c'):
	case CTRL('g'):
		t->prompt = PROMPT_NONE;
		return;
	case 127:
	case CTRL('h'):
		if (c->buf.len == 0)
			t->prompt = PROMPT_NONE;
		cmdline_backspace(c);
		return;
	case CTRL('d'):
		cmdline_delete(c);
		return;
	case CTRL('a'):
		cmdline_home(c);
		return;
	case CTRL('e'):
		cmdline_end(c);
		return;
	case CTRL('b'):
		cmdline_left(c);
		return;
	case CTRL('f'):
		cmdline_right(c);
		return;
	case CTRL('k'):
		cmdline_kill_end(c);
		return;
	case CTRL('u'):
		cmdline_kill_start(c);
		return;
	case CTRL('w'):
		cmdline_kill_word(c);
		return;
	case CTRL('p'):
		cmdline_history_prev(c);
		return;
	case CTRL('n'):
		cmdline_history_next(c);
		return;
	case '\t':
		if (t->prompt == PROMPT_COMMAND)
			complete(t);
		return;
	default:
		if (key >= 32 && key != 127) {
			char mb[MB_LEN_MAX + 1];
			mbstate_t st;
			size_t len;

			memset(&st, 0, sizeof st);
			len = wcrtomb(mb, (wchar_t)key, &st);
			if (len != (size_t)-1) {
				mb[len] = '\0';
				cmdline_insert(c, mb);
			}
		}
	}
}
