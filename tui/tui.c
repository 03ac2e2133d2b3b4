/*
 * tui — the framework: the pane registry, focus, the model, key dispatch,
 * the main loop, setting up and tearing down.  Around it: tui/layout.c
 * places and draws the panes, tui/bars.c the title and function bars,
 * tui/prompt.c the bottom line's prompts, tui/commands.c the `:`
 * commands, tui/console.c the console and execute, tui/statement.c and
 * tui/stream.c what runs in the background (execute; watch, trace, monitor).
 *
 * One thread, one loop: poll() on the terminal with the time left until
 * the next refresh; keys are handled as they come; the target is read
 * (py_reader_snapshot, from outside) when the timer expires; the screen is
 * redrawn only when something changed, through curses' screen diff (no
 * clear, so no flicker).
 */
#include "config.h"

#include "tui/tui.h"

#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>

#include "core/command.h"
#include "core/procfs.h"
#include "core/render.h"
#include "core/runner.h"
#include "core/termsafe.h"
#include "tui/bars.h"
#include "tui/commands.h"
#include "tui/console.h"
#include "tui/inside.h"
#include "tui/layout.h"
#include "tui/panes.h"
#include "tui/prompt.h"
#include "tui/statement.h"
#include "tui/stream.h"
#include "tui/termguard.h"

/* ---- helpers for panes ------------------------------------------------- */

void
tui_status(struct tui *t, bool error, const char *fmt, ...)
{
	va_list ap;

	free(t->status);
	va_start(ap, fmt);
	t->status = xvasprintf(fmt, ap);
	va_end(ap);
	t->status_error = error;
	t->dirty = true;
}

const struct py_thread *
tui_selected_thread(const struct tui *t)
{
	size_t i;

	if (t->snap == NULL || t->sel_tid == 0)
		return NULL;
	for (i = 0; i < t->snap->nthreads; i++)
		if (t->snap->threads[i].tid == t->sel_tid)
			return &t->snap->threads[i];
	return NULL;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
tui_copy(struct tui *t, const char *text)
{
	size_t n = strlen(text), i, lines = 0;
	struct sbuf seq = { 0 };

	sbuf_add(&seq, "\033]52;c;");
	for (i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)text[i] << 16;
		char q[4];

		if (i + 1 < n)
			v |= (unsigned char)text[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)text[i + 2];
		q[0] = b64[(v >> 18) & 63];
		q[1] = b64[(v >> 12) & 63];
		q[2] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		q[3] = i + 2 < n ? b64[v & 63] : '=';
		sbuf_addn(&seq, q, 4);
	}
	sbuf_add(&seq, "\a");
	for (i = 0; i < n; i++)
		lines += text[i] == '\n';
	if (isatty(STDOUT_FILENO))
		(void)!write(STDOUT_FILENO, seq.s, seq.len);
	sbuf_free(&seq);
	tui_status(t, false, "copied %zu lines to the clipboard (OSC 52; `:save FILE` writes a file)", lines);
}

static void
copy_stack(struct tui *t)
{
	struct sbuf text = { 0 };

	if (tui_selected_thread(t) != NULL)
		render_thread(&text, tui_selected_thread(t), t->sc);
	if (text.len == 0)
		tui_status(t, true, "no thread selected: nothing to copy");
	else
		tui_copy(t, text.s);
	sbuf_free(&text);
}

/* ---- the model ----------------------------------------------------------- */

static int
cmp_tick(const void *a, const void *b)
{
	const struct tick_sample *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Take a new snapshot as the model: CPU% since the last one, events. */
void
tui_set_snapshot(struct tui *t, struct py_snapshot *snap)
{
	long hz = sysconf(_SC_CLK_TCK);
	double dt = t->prev_ns ? (double)(snap->taken_ns - t->prev_ns) / 1e9 : 0;
	size_t i;

	free(t->cpu);
	t->cpu = xcalloc(snap->nthreads ? snap->nthreads : 1, sizeof *t->cpu);
	for (i = 0; i < snap->nthreads; i++) {
		struct tick_sample key = { snap->threads[i].tid, 0 }, *prev = NULL;

		if (t->nprev > 0 && snap->threads[i].tid != 0)
			prev = bsearch(&key, t->prev, t->nprev, sizeof *t->prev, cmp_tick);
		if (prev == NULL || dt <= 0 || hz <= 0 || snap->threads[i].cpu_ticks < prev->ticks)
			t->cpu[i] = -1;
		else
			t->cpu[i] = (double)(snap->threads[i].cpu_ticks - prev->ticks) * 100.0 /
			    ((double)hz * dt);
	}
	free(t->prev);
	t->prev = xcalloc(snap->nthreads ? snap->nthreads : 1, sizeof *t->prev);
	for (i = 0; i < snap->nthreads; i++)
		t->prev[i] = (struct tick_sample){ snap->threads[i].tid, snap->threads[i].cpu_ticks };
	t->nprev = snap->nthreads;
	qsort(t->prev, t->nprev, sizeof *t->prev, cmp_tick);
	t->prev_ns = snap->taken_ns;

	inside_apply_names(t, snap);
	py_snapshot_free(t->snap);
	t->snap = snap;
	panes_broadcast(t, &(struct pane_event){ .kind = EV_SNAPSHOT });
	for (i = 0; i < t->npanes; i++)
		pane_clamp(&t->panes[i]);
	t->dirty = true;
}

/* Still running: it exists and is not a zombie waiting for its parent. */
static bool
target_alive(pid_t pid)
{
	struct proc_thread_stat st;

	if (!procfs_exists(pid))
		return false;
	return !procfs_thread_stat(pid, pid, &st) || (st.state != 'Z' && st.state != 'X');
}

/* Read the target again.  Returns an fp_status. */
static int
take_snapshot(struct tui *t, char **causep)
{
	struct py_snapshot_opts opts = { .native = t->native };
	struct py_snapshot *snap;
	char *cause = NULL;
	int rc;

	t->next_refresh_ns = now_ns() + (uint64_t)(t->delay * 1e9);
	if (t->set != NULL)
		panes_broadcast(t, &(struct pane_event){ .kind = EV_TICK });
	if (t->exited || t->reader == NULL)
		return FP_OK;
	rc = py_reader_snapshot(t->reader, &opts, &snap, &cause);
	if (rc == FP_OK) {
		tui_set_snapshot(t, snap);
		free(cause);
		return FP_OK;
	}
	if (rc == FP_EEXITED || rc == FP_ENOPROC || !target_alive(t->pid)) {
		t->exited = true;
		inside_quiesce(t);
		if (t->runner != NULL && runner_session(t->runner) != NULL)
			runner_session_failed(t->runner);	/* the agent went with it */
		tui_status(t, true, "process %d exited; its last snapshot stays on screen (q quits)",
		    (int)t->pid);
	} else {
		tui_status(t, true, "%s", cause ? cause : "cannot read the process");
	}
	if (causep != NULL)
		*causep = cause;
	else
		free(cause);
	return rc;
}

/* ---- the process looked at ---------------------------------------------------- */

/* Make `pid` (read by `reader`, taken over) the process the panes show. */
static void
target_set(struct tui *t, pid_t pid, struct py_reader *reader)
{
	t->pid = pid;
	t->reader = reader;
	t->runner = runner_new(pid);
	console_set_io(t);
	t->sc = source_cache_new(pid);
	free(t->target_cmdline);
	t->target_cmdline = procfs_cmdline(pid);
	if (t->target_cmdline == NULL)
		t->target_cmdline = xstrdup("?");
	snprintf(t->version, sizeof t->version, "%s", py_reader_runtime(reader)->version);
}

/* A pane that belongs to the process looked at and keeps it busy. */
static const char *
target_pane_open(struct tui *t)
{
	size_t i;

	for (i = 0; i < t->npanes; i++) {
		const struct pane *p = &t->panes[i];

		if (p->visible && (p->ops->slot == SLOT_BOTTOM || p->ops->slot == SLOT_DETAIL) &&
		    p->ops != &pane_output_ops && p->ops != &pane_source_ops)
			return p->ops->name;
	}
	return NULL;
}

bool
tui_switch_target(struct tui *t, pid_t pid, char **cause)
{
	struct py_reader *reader = NULL;
	const char *busy;

	if (pid == t->pid && !t->exited)
		return true;
	if (t->busy || statement_running(t) || t->console_open) {
		fail(cause, FP_ERR, "a statement runs in process %d: wait for it or interrupt it first",
		    (int)t->pid);
		return false;
	}
	if (stream_running(t)) {
		fail(cause, FP_ERR, "a watch, trace or monitor runs in process %d: stop it first (q "
		    "in its pane)", (int)t->pid);
		return false;
	}
	if ((busy = target_pane_open(t)) != NULL) {
		fail(cause, FP_ERR, "the %s pane belongs to process %d: close it (Esc) first",
		    busy, (int)t->pid);
		return false;
	}
	if (py_reader_open(pid, &reader, cause) != FP_OK)
		return false;
	tui_hide_pane(t, tui_pane(t, &pane_source_ops));
	inside_quiesce(t);
	inside_free(t->inside);
	t->inside = inside_new();
	runner_free(t->runner);
	source_cache_free(t->sc);
	py_reader_close(t->reader);
	target_set(t, pid, reader);
	t->exited = false;
	free(t->prev);
	t->prev = NULL;
	t->nprev = 0;
	t->prev_ns = 0;
	t->sel_tid = 0;
	take_snapshot(t, NULL);
	inside_attach(t, false, true);
	t->dirty = true;
	return true;
}

/* "tree of 4100", "match 'train'", "pids 4101, 4102": the set, for the title. */
static char *
tui_set_name(const struct proc_set_spec *spec)
{
	struct sbuf s = { 0 };

	if (spec->match != NULL)
		sbuf_addf(&s, "match '%s'", spec->match);
	else if (spec->tree)
		sbuf_addf(&s, "tree of %d", (int)spec->pids[0]);
	else
		for (size_t i = 0; i < spec->npids; i++)
			sbuf_addf(&s, "%s%d", i ? ", " : "pids ", (int)spec->pids[i]);
	return sbuf_steal(&s);
}

/* ---- keys ------------------------------------------------------------------ */

/* Is the focused pane the one of a background watch, trace or monitor, still running? */
static bool
focus_live(struct tui *t)
{
	struct pane *p = t->focus;

	return stream_running(t) && p != NULL && p->visible && p->ops->live != NULL &&
	    p->ops->live(p);
}

static void
act(struct tui *t, enum action a)
{
	struct pane *p = t->focus, *q;

	t->dirty = true;
	if (a != A_BACK && p->ops->key != NULL && p->ops->key(p, a))
		return;
	if (panes_move(p, a))
		return;
	switch (a) {
	case A_SEARCH:
		prompt_open(t, PROMPT_SEARCH, NULL);
		break;
	case A_SEARCH_NEXT:
	case A_SEARCH_PREV:
		prompt_search(t, a == A_SEARCH_NEXT);
		break;
	case A_FILTER:
		if (p->ops->filter != NULL)
			prompt_open(t, PROMPT_FILTER, p->ops->filter_text(p));
		break;
	case A_NATIVE:
		t->native = !t->native;
		take_snapshot(t, NULL);
		if (t->native)
			tui_status(t, false, "native frames shown: each thread is stopped briefly "
			    "while it is unwound (x hides them)");
		else
			tui_status(t, false, "native frames hidden");
		break;
	case A_QUIT:
		t->quit = true;
		break;
	case A_COPY:
		/* what the pane does not copy itself: the selected stack */
		copy_stack(t);
		break;
	case A_HELP:
		if ((q = tui_slot_pane(t, SLOT_OVERLAY)) != NULL) {
			tui_hide_pane(t, q);
			break;
		}
		q = tui_pane(t, &pane_help_ops);
		q->cursor = q->top = 0;
		tui_show_pane(t, q, true);
		break;
	case A_COMMAND:
		prompt_open(t, PROMPT_COMMAND, NULL);
		break;
	case A_CONSOLE:
		commands_run(t, "console");
		break;
	case A_FLAME:
		commands_run(t, "flame");
		break;
	case A_MEM:
		tui_open(t, &(struct pane_event){ .kind = EV_OPEN_MEM });
		break;
	case A_AGENT:
		/* the locals when a frame's source is shown; loads it anyway */
		inside_reload_locals(t);
		break;
	case A_REDRAW:
		clearok(curscr, TRUE);
		break;
	case A_NEXT_PANE:
	case A_PREV_PANE:
		panes_next(t, a == A_NEXT_PANE ? 1 : -1);
		break;
	case A_MAXIMISE:
		t->maximised = t->maximised != NULL ? NULL : t->focus;
		layout_panes(t);
		break;
	case A_PAUSE:
		t->paused = !t->paused;
		if (!t->paused)
			take_snapshot(t, NULL);
		tui_status(t, false, t->paused ? "paused: Space resumes" : "live again");
		break;
	case A_REFRESH:
		take_snapshot(t, NULL);
		break;
	case A_BACK:
		if (focus_live(t) && p->ops->key(p, A_BACK)) {
			stream_cancel(t);	/* the pane closes when it has ended */
		} else if (tui_slot_pane(t, SLOT_OVERLAY) == NULL && t->search_re != NULL) {
			pcre2_code_free(t->search_re);
			t->search_re = NULL;
			free(t->search);
			t->search = NULL;
		} else {
			panes_back(t);
		}
		break;
	default:
		break;
	}
}

/* Which pane is at (y, x), and which of its lines (or -1). */
static struct pane *
pane_at(struct tui *t, int y, int x, long *line)
{
	struct pane *p = NULL;
	size_t i;
	int first;

	if ((p = tui_slot_pane(t, SLOT_OVERLAY)) != NULL) {
		if (y < p->y || y >= p->y + p->h || x < p->x || x >= p->x + p->w)
			return NULL;
	} else {
		for (i = 0; i < t->npanes; i++) {
			struct pane *q = &t->panes[i];

			if (q->visible && q->h > 0 && y >= q->y && y < q->y + q->h && x >= q->x && x < q->x + q->w)
				p = q;
		}
	}
	if (p == NULL)
		return NULL;
	first = p->y + 1 + (p->ops->header ? 1 : 0);
	*line = y >= first && y < p->y + p->h - 1 ? (long)p->top + (y - first) : -1;
	if (*line >= (long)p->ops->nlines(p))
		*line = -1;
	return p;
}

static void handle_key(struct tui *t, int key, bool fkey);

static void
mouse(struct tui *t)
{
	static uint64_t last_ns;
	static int last_y = -1, last_x = -1;
	struct pane *p;
	MEVENT me;
	long line;

	if (getmouse(&me) != OK)
		return;
	if (me.y == LINES - 1 && (me.bstate & BUTTON1_PRESSED) && t->prompt == PROMPT_NONE) {
		int key;

		if (bars_key_at(me.x, &key))
			handle_key(t, key, key >= KEY_MIN);
		return;
	}
	if ((p = pane_at(t, me.y, me.x, &line)) == NULL)
		return;
	t->dirty = true;
	if (me.bstate & BUTTON4_PRESSED) {
		p->top = p->top > 3 ? p->top - 3 : 0;
		pane_set_cursor(p, p->cursor > 3 ? p->cursor - 3 : 0);
		return;
	}
#ifdef BUTTON5_PRESSED
	if (me.bstate & BUTTON5_PRESSED) {
		size_t n = p->ops->nlines(p);

		p->top += 3;
		pane_set_cursor(p, p->cursor + 3 < n ? p->cursor + 3 : (n ? n - 1 : 0));
		return;
	}
#endif
	if (!(me.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)))
		return;
	if (p->ops->slot != SLOT_OVERLAY) {
		t->focus = p;
		layout_panes(t);
	}
	if (line >= 0) {
		bool dbl = me.y == last_y && me.x == last_x && now_ns() - last_ns < 400000000ull;

		pane_set_cursor(p, (size_t)line);
		if (dbl)
			act(t, A_ENTER);
	}
	last_ns = now_ns();
	last_y = me.y;
	last_x = me.x;
}

static void
handle_key(struct tui *t, int key, bool fkey)
{
	const struct keybinding *b;
	struct keymap_pane keys;
	char buf[16];

	bars_menu_set(NULL);
	if (fkey && key == KEY_RESIZE) {
		layout_panes(t);
		t->dirty = true;
		return;
	}
	if (t->prompt != PROMPT_NONE) {
		prompt_key(t, key, fkey);
		return;
	}
	if (!fkey && (key == ESC || key == CTRL('c')) && statement_running(t) && !focus_live(t)) {
		statement_cancel(t);	/* that statement only: the rest goes on */
		return;
	}
	if (!fkey && key == CTRL('c') && stream_running(t)) {
		/* the watch (or monitor) only, as Ctrl-C stopped it when it held the screen */
		if (focus_live(t))
			act(t, A_BACK);
		else
			stream_cancel(t);
		return;
	}
	if (fkey && key == KEY_MOUSE) {
		mouse(t);
		return;
	}
	if (!fkey && key == '\r')
		key = '\n';
	if (!fkey && key >= KEY_MIN)
		key = -1;	/* a character that happens to have a KEY_ code's value */
	free(t->status);
	t->status = NULL;
	t->dirty = true;
	if (t->too_small && key != 'q' && key != CTRL('c') && key != CTRL('l'))
		return;
	if (console_modal_key(t, key, fkey))
		return;
	keys = panes_keys(t);
	b = keymap_lookup(&keys, key);
	if (b == NULL) {
		if (key > 32 && key < 127)
			tui_status(t, true, "'%s' does nothing here: ? lists the keys",
			    keymap_key_name(key, buf, sizeof buf));
		return;
	}
	act(t, b->action);
}

/* ---- the loop ------------------------------------------------------------------- */

/*
 * One turn: draw what changed, wait for a key (until the next refresh, or
 * not at all while a statement runs), handle the keys, refresh when due,
 * let tui/inside pick up the agent's answers.  `busy`: called by the
 * runner while a statement runs; keys then only interrupt or scroll.
 */
void
tui_pump(struct tui *t, bool busy)
{
	struct pollfd pfd[2] = { { .fd = STDIN_FILENO, .events = POLLIN }, { .fd = -1 } };
	int timeout = -1, r, tick;
	wint_t wc;

	/* Keys typed while a statement ran, up to the end of the next line. */
	while (!busy && t->nahead > 0 && !t->quit &&
	    !(t->console_open && t->console_input != CONSOLE_WAIT)) {
		int key = t->ahead[0].key;
		bool fkey = t->ahead[0].fkey;

		memmove(t->ahead, t->ahead + 1, --t->nahead * sizeof t->ahead[0]);
		handle_key(t, key, fkey);
	}
	/* a set's processes pane goes on when the process looked at exits */
	if (!busy && !t->paused && (!t->exited || t->set != NULL)) {
		uint64_t now = now_ns();

		timeout = now >= t->next_refresh_ns ? 0 :
		    (int)((t->next_refresh_ns - now + 999999) / 1000000);
	}
	if (!busy && (tick = inside_tick(t)) >= 0 && (timeout < 0 || tick < timeout))
		timeout = tick;
	/* The agent's answers, events of a background statement among them. */
	if ((tick = statement_tick(t, &pfd[1].fd)) >= 0 && (timeout < 0 || tick < timeout))
		timeout = tick;
	if ((tick = stream_tick(t)) >= 0 && (timeout < 0 || tick < timeout))
		timeout = tick;
	pfd[1].events = POLLIN;
	if (busy)
		timeout = 0;	/* the runner waits for the agent meanwhile */
	if (t->dirty) {
		tui_draw(t);
		t->dirty = false;
	}
	r = poll(pfd, pfd[1].fd >= 0 ? 2 : 1, timeout);
	if (r < 0 && errno != EINTR) {
		t->quit = true;
		return;
	}
	if (r > 0 && (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL)) && !(pfd[0].revents & POLLIN)) {
		t->quit = true;	/* the terminal is gone */
		return;
	}
	while ((r = wget_wch(stdscr, &wc)) != ERR) {
		if (busy)
			console_busy_key(t, (int)wc, r == KEY_CODE_YES);
		else if (t->console_open && t->console_input != CONSOLE_WAIT)
			console_type_ahead(t, (int)wc, r == KEY_CODE_YES);	/* a line was just entered */
		else
			handle_key(t, (int)wc, r == KEY_CODE_YES);
		if (t->quit)
			break;
	}
	if (!t->quit && !t->paused && (!t->exited || t->set != NULL) && now_ns() >= t->next_refresh_ns)
		take_snapshot(t, NULL);
	if (busy && t->dirty) {
		tui_draw(t);
		t->dirty = false;
	}
}

/* ---- set up and tear down ---------------------------------------------------------- */

static struct tui *
tui_new(pid_t pid)
{
	struct tui *t = xcalloc(1, sizeof *t);

	t->pid = pid;
	t->delay = 1.0;
	theme_default(&t->theme);
	t->history = history_open(NULL);
	t->console_history = history_open(NULL);
	t->search_history = history_open(NULL);
	t->filter_history = history_open(NULL);
	t->inside = inside_new();
	cmdline_init(&t->edit, NULL);
	panes_open(t);
	commands_bind(t);
	return t;
}

void
tui_free(struct tui *t)
{
	if (t == NULL)
		return;
	statement_free(t);
	stream_free(t);
	commands_bind(NULL);
	panes_close(t);
	py_snapshot_free(t->snap);
	free(t->cpu);
	free(t->prev);
	free(t->status);
	free(t->search);
	pcre2_code_free(t->search_re);
	cmdline_free(&t->edit);
	history_close(t->history);
	history_close(t->console_history);
	history_close(t->search_history);
	history_close(t->filter_history);
	free(t->console_prompt);
	free(t->console_line);
	inside_free(t->inside);
	runner_free(t->runner);
	source_cache_free(t->sc);
	free(t->target_cmdline);
	free(t->set_name);
	py_reader_close(t->reader);
	bars_menu_set(NULL);
	free(t);
}

struct tui *
tui_new_headless(struct py_snapshot *snap)
{
	struct tui *t = tui_new(1);

	t->target_cmdline = xstrdup("python bench.py");
	snprintf(t->version, sizeof t->version, "%s", snap->version);
	t->use_color = has_colors();
	theme_apply(&t->theme, t->use_color);
	layout_panes(t);
	tui_set_snapshot(t, snap);
	return t;
}

/* What to write to the terminal to undo the TUI, if we die by a signal. */
static char *
restore_sequence(void)
{
	static const char *const caps[] = { "sgr0", "cnorm", "rmkx", "rmcup" };
	struct sbuf s = { 0 };
	size_t i;

	sbuf_add(&s, "\033[?1000l\033[?1002l\033[?1003l\033[?1006l");
	for (i = 0; i < FP_NELEM(caps); i++) {
		char *v = tigetstr((char *)caps[i]);

		if (v != NULL && v != (char *)-1)
			sbuf_add(&s, v);
	}
	return sbuf_steal(&s);
}

static SCREEN *screen;

static int
screen_init(struct tui *t, const struct tui_options *opts, char **cause)
{
	struct termios tio;
	char *seq;
	SCREEN *scr;

	if (tcgetattr(STDIN_FILENO, &tio) != 0)
		return fail(cause, FP_ERR, "standard input is not a terminal: %s", strerror(errno));
	if ((scr = newterm(NULL, stdout, stdin)) == NULL)
		return fail(cause, FP_ERR, "cannot use the terminal (TERM=%s): set TERM, or use --cmd",
		    getenv("TERM") ? getenv("TERM") : "");
	set_term(scr);
	screen = scr;
	set_escdelay(25);
	raw();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	intrflush(stdscr, FALSE);
	curs_set(0);
	t->use_color = !opts->no_color && has_colors();
	if (t->use_color)
		start_color();
	theme_apply(&t->theme, t->use_color);
	mouseinterval(0);
	mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
	    | BUTTON5_PRESSED
#endif
	    , NULL);
	seq = restore_sequence();
	guard_terminal(STDOUT_FILENO, seq, &tio);
	free(seq);
	layout_panes(t);
	return FP_OK;
}

static void
screen_end(void)
{
	mousemask(0, NULL);
	endwin();
	guard_terminal(-1, NULL, NULL);
	delscreen(screen);
	screen = NULL;
}

int
tui_run(pid_t pid, struct py_reader *reader, const struct tui_options *opts)
{
	struct tui *t = tui_new(pid);
	struct sbuf errs = { 0 };
	char *cause = NULL, *hpath;
	int rc;

	draw_init(strcmp(nl_langinfo(CODESET), "UTF-8") == 0);
	t->delay = opts->delay;
	target_set(t, pid, reader);
	if ((t->set = opts->set) != NULL) {
		t->set_name = tui_set_name(opts->set);
		tui_show_pane(t, tui_pane(t, &pane_procs_ops), true);
	}
	hpath = history_default_path();
	history_close(t->history);
	t->history = history_open(hpath);
	free(hpath);

	if (opts->theme != NULL && theme_load(&t->theme, opts->theme, &errs, &cause) != FP_OK) {
		termsafe_error(stderr, cause);
		free(cause);
		sbuf_free(&errs);
		tui_free(t);
		return FP_EUSAGE;
	}
	/* The first read before the screen: its errors are plain messages. */
	if ((rc = take_snapshot(t, &cause)) != FP_OK) {
		termsafe_error(stderr, cause ? cause : "cannot read the process");
		free(cause);
		sbuf_free(&errs);
		tui_free(t);
		return rc;
	}
	if ((rc = screen_init(t, opts, &cause)) != FP_OK) {
		termsafe_error(stderr, cause);
		free(cause);
		sbuf_free(&errs);
		tui_free(t);
		return rc;
	}
	if (errs.len > 0) {
		char *nl = strchr(errs.s, '\n');

		if (nl != NULL && nl[1] != '\0')
			strcpy(nl, " (and more; the rest of the theme loaded)");
		else if (nl != NULL)
			*nl = '\0';
		tui_status(t, true, "%s", errs.s);
	}
	sbuf_free(&errs);
	/* An agent already running there (never loads one): names, locals. */
	inside_attach(t, false, true);
	t->dirty = true;

	while (!t->quit)
		tui_pump(t, false);
	screen_end();
	tui_free(t);
	return FP_OK;
}

/* ---- a fake snapshot for benchmarks ------------------------------------------- */

struct py_snapshot *
tui_fake_snapshot(size_t nthreads, size_t depth)
{
	struct py_snapshot *s = xcalloc(1, sizeof *s);
	size_t i, k;

	s->pid = 1;
	snprintf(s->version, sizeof s->version, "3.12.1");
	s->threads = xcalloc(nthreads, sizeof *s->threads);
	s->nthreads = nthreads;
	s->taken_ns = now_ns();
	for (i = 0; i < nthreads; i++) {
		struct py_thread *t = &s->threads[i];

		t->tid = (pid_t)(1000 + i);
		t->thread_id = 0x7f0000000000ull + i * 0x1000;
		t->name = xasprintf("worker-%zu", i);
		t->os_state = i % 7 == 0 ? 'R' : 'S';
		t->gil = i == 3 ? GIL_HELD : i % 11 == 0 ? GIL_WAITING : GIL_NONE;
		t->is_main = i == 0;
		t->cpu_ticks = i * 3;
		t->frames = xcalloc(depth, sizeof *t->frames);
		t->nframes = depth;
		for (k = 0; k < depth; k++) {
			struct py_frame *f = &t->frames[k];

			f->filename = xasprintf("/srv/app/lib/python3.12/site-packages/pkg%zu/module_%zu.py",
			    k % 13, (i + k) % 17);
			f->name = xasprintf("function_%zu", (i * 7 + k) % 97);
			f->qualname = xasprintf("Class%zu.function_%zu", k % 5, (i * 7 + k) % 97);
			f->line = (int)(10 + (i + k) % 900);
			f->code = 0x7f1000000000ull + k * 64;
			f->entry = k + 1 == depth;
		}
	}
	return s;
}
