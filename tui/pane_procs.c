/*
 * The processes pane: shown above the threads pane when the TUI looks at
 * a process set (--tree, --match, PID,PID).  One line per member: pid,
 * rank (RANK or LOCAL_RANK in its environment), CPython version, threads,
 * CPU% over the last refresh, state, command line; the set is resolved
 * again at each refresh, so a tree or a match follows processes as they
 * come, and one that goes stays listed as exited.  Moving the cursor onto
 * a member makes it the process the threads, stack and source panes show
 * (tui_switch_target); a member that is not Python says why and cannot be
 * selected.  `g` shows instead the set's stacks grouped (core/stackset's
 * `stack --group`), largest group first; Enter on a group selects its
 * first process.  Reads /proc and memory from outside only: it never
 * stops a member nor loads the agent into one.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curses.h>

#include "core/perfset.h"
#include "core/procfs.h"
#include "core/procset.h"
#include "core/pystack.h"
#include "core/stackset.h"
#include "tui/tui.h"

struct member {
	pid_t pid;
	char *cmdline;
	char *rank;		/* "3", "local 3", or NULL */
	char *version;		/* CPython's, or NULL when not Python */
	char *skip;		/* why it is not looked at, or NULL */
	char state;		/* /proc's */
	bool read;		/* state, ticks and threads were read */
	bool exited;		/* gone: what it had stays */
	uint64_t ticks;		/* utime + stime */
	double cpu;		/* < 0: unknown */
	long threads;
};

struct procs {
	struct member *m;	/* by pid */
	size_t n, a;
	uint64_t ticks_ns;	/* when ticks were read */
	bool grouped;		/* the grouped stacks instead of the list */
	char **lines;		/* the grouped view's */
	size_t nlines, alines;
	char *error;		/* the set could not be resolved, or NULL */
};

#define W_PID 7
#define W_RANK 8
#define W_VER 8
#define W_THR 4
#define W_CPU 6
#define W_STATE 8

/* "3" or "local 3" from perfset_label's "rank 3 (pid N)", or NULL. */
static char *
member_rank(pid_t pid, const char *cmdline)
{
	char *label = perfset_label(pid, cmdline ? cmdline : ""), *rank = NULL, *end;

	if (strncmp(label, "rank ", 5) == 0 || strncmp(label, "local rank ", 11) == 0) {
		end = strstr(label, " (pid ");
		if (end != NULL) {
			*end = '\0';
			rank = label[0] == 'l' ? xasprintf("local %s", label + 11) : xstrdup(label + 5);
		}
	}
	free(label);
	return rank;
}

/* State, utime + stime and threads of the whole process from /proc/PID/stat. */
static bool
process_stat(pid_t pid, char *state, uint64_t *ticks, long *threads)
{
	char path[64], *text, *p;
	unsigned long long ut = 0, st = 0;
	size_t len;
	int n;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((text = read_file_str(path, &len)) == NULL)
		return false;
	/* the name in parentheses may hold anything: the fields follow the last ')' */
	p = strrchr(text, ')');
	n = p == NULL ? 0 : sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
	    "%*d %*d %*d %*d %ld", state, &ut, &st, threads);
	free(text);
	*ticks = ut + st;
	return n == 4;
}

static void
member_free(struct member *m)
{
	free(m->cmdline);
	free(m->rank);
	free(m->version);
	free(m->skip);
}

/* A member seen for the first time: what it is, read once. */
static void
member_probe(struct member *m, pid_t pid)
{
	struct py_reader *reader = NULL;
	char *cause = NULL;

	memset(m, 0, sizeof *m);
	m->pid = pid;
	m->cpu = -1;
	m->cmdline = procfs_cmdline(pid);
	m->rank = member_rank(pid, m->cmdline);
	if (py_reader_open(pid, &reader, &cause) == FP_OK) {
		m->version = xstrdup(py_reader_runtime(reader)->version);
		py_reader_close(reader);
	} else {
		m->skip = cause ? cause : xstrdup("cannot read it");
	}
}

static struct member *
member_find(struct procs *ps, pid_t pid)
{
	size_t i;

	for (i = 0; i < ps->n; i++)
		if (ps->m[i].pid == pid)
			return &ps->m[i];
	return NULL;
}

static int
cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Put the cursor on the process the other panes show, without moving it there. */
static void
cursor_to_target(struct pane *p)
{
	struct procs *ps = p->data;
	size_t i;

	if (ps->grouped)
		return;
	for (i = 0; i < ps->n; i++)
		if (ps->m[i].pid == p->tui->pid)
			p->cursor = i;
}

/* Resolve the set again: new members probed, the rest's /proc read. */
static void
procs_refresh(struct pane *p)
{
	struct procs *ps = p->data;
	struct proc_set set = { 0 };
	struct member *m;
	uint64_t now = now_ns(), ticks;
	double dt = ps->ticks_ns ? (double)(now - ps->ticks_ns) / 1e9 : 0;
	long hz = sysconf(_SC_CLK_TCK), threads;
	size_t i, before = ps->n;
	char *cause = NULL, state;

	free(ps->error);
	ps->error = NULL;
	if (procset_resolve(p->tui->set, &set, &cause) != FP_OK)
		ps->error = cause ? cause : xstrdup("the set is empty");
	for (i = 0; i < set.n; i++)
		if (member_find(ps, set.m[i].pid) == NULL)
			member_probe(ARRAY_PUSH(ps->m, ps->n, ps->a), set.m[i].pid);
	procset_clear(&set);
	qsort(ps->m, ps->n, sizeof *ps->m, cmp_member);
	for (i = 0; i < ps->n; i++) {
		m = &ps->m[i];
		if (m->exited)
			continue;
		if (!process_stat(m->pid, &state, &ticks, &threads) || state == 'Z' || state == 'X') {
			m->exited = true;
			m->cpu = -1;
			continue;
		}
		m->cpu = dt > 0 && hz > 0 && m->read && ticks >= m->ticks ?
		    (double)(ticks - m->ticks) * 100.0 / ((double)hz * dt) : -1;
		m->state = state;
		m->ticks = ticks;
		m->read = true;
		m->threads = threads;
	}
	ps->ticks_ns = now;
	cursor_to_target(p);
	if (ps->n != before)
		tui_relayout(p->tui);	/* the pane's height follows its lines */
}

/* The grouped stacks of the set, now (core/stackset's `stack --group`). */
static void
group(struct pane *p)
{
	struct procs *ps = p->data;
	struct stackset_opts o = { .group = true };
	struct proc_set set = { 0 };
	struct sbuf out = { 0 };
	char *cause = NULL, *line, *next;
	size_t i;

	for (i = 0; i < ps->nlines; i++)
		free(ps->lines[i]);
	ps->nlines = 0;
	if (procset_resolve(p->tui->set, &set, &cause) == FP_OK &&
	    stackset_run(&set, &o, &out, &cause) == FP_OK) {
		for (line = out.s; line != NULL && *line != '\0'; line = next) {
			next = strchr(line, '\n');
			if (next != NULL)
				*next++ = '\0';
			*ARRAY_PUSH(ps->lines, ps->nlines, ps->alines) = xstrdup(line);
		}
	} else {
		*ARRAY_PUSH(ps->lines, ps->nlines, ps->alines) =
		    xstrdup(cause ? cause : "cannot read the set");
	}
	free(cause);
	sbuf_free(&out);
	procset_clear(&set);
}

/* "7 threads in 7 processes — pids 4102, 4104–4109, thread MainThread:" */
static bool
group_header(const char *line)
{
	return isdigit((unsigned char)line[0]) && strstr(line, " \u2014 pid") != NULL;
}

/* The first pid of the group the grouped view's cursor is in, or 0. */
static pid_t
group_first_pid(struct procs *ps, size_t line)
{
	const char *s;

	for (line = line + 1; line-- > 0;) {
		if (ps->lines[line][0] == '\0' && line + 1 < ps->nlines && !group_header(ps->lines[line + 1]))
			return 0;	/* a blank line: between groups */
		if (group_header(ps->lines[line])) {
			s = strstr(ps->lines[line], " \u2014 pid") + strlen(" \u2014 pid");
			s += *s == 's';
			return (pid_t)atoi(s);
		}
	}
	return 0;
}

/* Make member `m` the process looked at; false (and the status says why) if it cannot be. */
static bool
select_member(struct pane *p, const struct member *m)
{
	char *cause = NULL;

	if (m->skip != NULL) {
		tui_status(p->tui, true, "process %d is not looked at: %s", (int)m->pid, m->skip);
		return false;
	}
	if (m->exited) {
		tui_status(p->tui, true, "process %d exited", (int)m->pid);
		return false;
	}
	if (!tui_switch_target(p->tui, m->pid, &cause)) {
		tui_status(p->tui, true, "%s", cause ? cause : "cannot read the process");
		free(cause);
		return false;
	}
	tui_status(p->tui, false, "process %d: its threads and stacks", (int)m->pid);
	return true;
}

static void
procs_open(struct pane *p)
{
	p->data = xcalloc(1, sizeof(struct procs));
}

static void
procs_close(struct pane *p)
{
	struct procs *ps = p->data;
	size_t i;

	if (ps == NULL)
		return;
	for (i = 0; i < ps->n; i++)
		member_free(&ps->m[i]);
	for (i = 0; i < ps->nlines; i++)
		free(ps->lines[i]);
	free(ps->m);
	free(ps->lines);
	free(ps->error);
	free(ps);
	p->data = NULL;
}

static size_t
procs_nlines(struct pane *p)
{
	struct procs *ps = p->data;

	return ps->grouped ? ps->nlines : ps->n;
}

static void
procs_title(struct pane *p, struct sbuf *out)
{
	struct procs *ps = p->data;
	size_t i, py = 0, gone = 0;

	for (i = 0; i < ps->n; i++) {
		py += ps->m[i].version != NULL;
		gone += ps->m[i].exited;
	}
	sbuf_addf(out, "Processes %zu %s %s", ps->n, glyph(G_DOT),
	    p->tui->set_name ? p->tui->set_name : "");
	sbuf_addf(out, " %s %zu Python", glyph(G_DOT), py);
	if (gone > 0)
		sbuf_addf(out, ", %zu exited", gone);
	if (ps->grouped)
		sbuf_addf(out, " %s stacks grouped (g: the list)", glyph(G_DOT));
	if (ps->error != NULL)
		sbuf_addf(out, " %s %s", glyph(G_DOT), ps->error);
}

static void
procs_header(struct pane *p, struct tline *l)
{
	if (((struct procs *)p->data)->grouped)
		return;
	tline_col(l, EL_HEADER, "PID", W_PID, true);
	tline_add(l, EL_HEADER, " ");
	tline_col(l, EL_HEADER, "RANK", W_RANK, false);
	tline_add(l, EL_HEADER, " ");
	tline_col(l, EL_HEADER, "PYTHON", W_VER, false);
	tline_add(l, EL_HEADER, " ");
	tline_col(l, EL_HEADER, "THR", W_THR, true);
	tline_add(l, EL_HEADER, " ");
	tline_col(l, EL_HEADER, "CPU%", W_CPU, true);
	tline_add(l, EL_HEADER, " ");
	tline_col(l, EL_HEADER, "STATE", W_STATE, false);
	tline_add(l, EL_HEADER, " ");
	tline_add(l, EL_HEADER, "COMMAND");
}

static const char *
state_name(const struct member *m)
{
	if (m->exited)
		return "exited";
	switch (m->state) {
	case 'R':
		return "running";
	case 'D':
		return "blocked";
	case 'T':
	case 't':
		return "stopped";
	default:
		return "idle";
	}
}

static void
draw_member(struct pane *p, const struct member *m, struct tline *l)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%d", (int)m->pid);
	tline_col(l, m->pid == p->tui->pid ? EL_THREAD_GIL : EL_THREAD_TID, buf, W_PID, true);
	tline_add(l, EL_DEFAULT, " ");
	tline_col(l, EL_THREAD_NAME, m->rank ? m->rank : "-", W_RANK, false);
	tline_add(l, EL_DEFAULT, " ");
	tline_col(l, EL_DEFAULT, m->version ? m->version : "-", W_VER, false);
	tline_add(l, EL_DEFAULT, " ");
	snprintf(buf, sizeof buf, "%ld", m->threads);
	tline_col(l, EL_DEFAULT, m->read && !m->exited ? buf : "-", W_THR, true);
	tline_add(l, EL_DEFAULT, " ");
	if (m->cpu < 0)
		snprintf(buf, sizeof buf, "-");
	else
		snprintf(buf, sizeof buf, "%.1f", m->cpu);
	tline_col(l, m->cpu >= 50 ? EL_THREAD_CPU_HIGH : EL_THREAD_CPU, buf, W_CPU, true);
	tline_add(l, EL_DEFAULT, " ");
	tline_col(l, m->state == 'R' ? EL_THREAD_RUNNING : EL_THREAD_IDLE, state_name(m), W_STATE,
	    false);
	tline_add(l, EL_DEFAULT, " ");
	if (m->skip != NULL) {
		tline_addf(l, EL_STACK_ERROR, "[skipped: %s] ", m->skip);
	}
	tline_add(l, EL_THREAD_TOP, m->cmdline ? m->cmdline : "?");
}

static void
procs_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct procs *ps = p->data;
	const char *s;

	if (!ps->grouped) {
		draw_member(p, &ps->m[line], l);
		return;
	}
	s = ps->lines[line];
	tline_add(l, group_header(s) ? EL_STACK_FUNCTION : s[0] == ' ' ? EL_STACK_SOURCE :
	    EL_HEADER, s);
}

static bool
procs_key(struct pane *p, enum action a)
{
	struct procs *ps = p->data;
	struct member *m;
	pid_t pid;

	switch (a) {
	case A_GROUP:
		ps->grouped = !ps->grouped;
		if (ps->grouped)
			group(p);
		p->cursor = p->top = 0;
		cursor_to_target(p);
		tui_relayout(p->tui);
		tui_status(p->tui, false, ps->grouped ? "stacks grouped across the set (g: the list)" :
		    "the processes of the set");
		return true;
	case A_REFRESH:
		if (ps->grouped)
			group(p);
		return false;	/* and the rest refreshes too */
	case A_ENTER:
		if (!ps->grouped) {
			if (p->cursor < ps->n && select_member(p, &ps->m[p->cursor]))
				tui_open(p->tui, &(struct pane_event){ .kind = EV_OPEN_PROCESS });
			return true;
		}
		if ((pid = group_first_pid(ps, p->cursor)) == 0 || (m = member_find(ps, pid)) == NULL) {
			tui_status(p->tui, true, "no group here: Enter on a group's lines");
			return true;
		}
		if (select_member(p, m)) {
			ps->grouped = false;
			cursor_to_target(p);
			tui_relayout(p->tui);
		}
		return true;
	default:
		return false;
	}
}

static bool
procs_event(struct pane *p, const struct pane_event *ev)
{
	if (ev->kind == EV_TICK && p->visible)
		procs_refresh(p);
	return false;
}

static void
procs_moved(struct pane *p)
{
	struct procs *ps = p->data;

	if (!ps->grouped && p->cursor < ps->n && ps->m[p->cursor].pid != p->tui->pid)
		select_member(p, &ps->m[p->cursor]);
}

static const struct keybinding procs_keys[] = {
	{ NULL, '\n', A_ENTER, "Threads", "look at this process (or a group's first): its threads" },
	{ NULL, KEY_ENTER, A_ENTER, NULL, "look at this process (or a group's first): its threads" },
	{ NULL, 'g', A_GROUP, "Group", "the set's stacks grouped, largest group first (again: the list)" },
	{ .key = 0 },
};

const struct pane_ops pane_procs_ops = {
	.name = "processes",
	.help_title = "Processes pane (a process set)",
	.slot = SLOT_TOP,
	.keys = procs_keys,
	.marker = true,
	.open = procs_open,
	.close = procs_close,
	.nlines = procs_nlines,
	.title = procs_title,
	.header = procs_header,
	.draw_line = procs_draw_line,
	.key = procs_key,
	.event = procs_event,
	.moved = procs_moved,
};
