/*
 * inside — the TUI's requests to the agent: thread names and locals in
 * the background (one request in flight, picked up by inside_tick), names
 * for completion in the foreground (bounded by INSIDE_COMPLETE_MS).
 */
#include "config.h"

#include "tui/inside.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/render.h"
#include "core/render_agent.h"
#include "core/session.h"
#include "tui/confirm.h"
#include "tui/tui.h"

/* A background request gives up after this long (and is asked again later). */
#define NAMES_TIMEOUT_MS 2000
#define LOCALS_TIMEOUT_MS 10000
/* At most this many names come back for one Tab. */
#define COMPLETE_MAX 400

enum job { JOB_NONE, JOB_NAMES, JOB_LOCALS };

/* The frame the source view shows, as the outside snapshot saw it. */
struct frame_ref {
	bool set;
	bool python;		/* false: a native frame, which has no locals */
	uint64_t thread_id;
	size_t nframes;		/* frames of the thread then */
	size_t index;		/* 0 = innermost */
	char *file, *function;
};

struct inside {
	enum job job;
	uint64_t id;
	uint64_t sent_ns;
	uint64_t names_due_ns;
	struct agent_threads *names;	/* the last `threads` answer with names */
	struct frame_ref frame;
	enum { LOCALS_NONE, LOCALS_ASKING, LOCALS_SHOWN, LOCALS_FAILED } locals;
	bool load_ok;		/* the user said yes to loading it into this process */
};

struct inside *
inside_new(void)
{
	return xcalloc(1, sizeof(struct inside));
}

static void
frame_clear(struct frame_ref *f)
{
	free(f->file);
	free(f->function);
	memset(f, 0, sizeof *f);
}

void
inside_free(struct inside *in)
{
	if (in == NULL)
		return;
	agent_threads_free(in->names);
	frame_clear(&in->frame);
	free(in);
}

/* The session with the agent, or NULL; never connects. */
static struct session *
sess(struct tui *t)
{
	return t->runner != NULL ? runner_session(t->runner) : NULL;
}

enum runner_agent_state
inside_state(struct tui *t)
{
	return t->runner ? runner_agent_state(t->runner) : RUNNER_AGENT_NONE;
}

/* The session broke: give it back to the runner, which closes it. */
static void
lost(struct tui *t, const char *cause)
{
	struct inside *in = t->inside;

	in->job = JOB_NONE;
	runner_session_failed(t->runner);
	if (in->locals == LOCALS_ASKING) {
		in->locals = LOCALS_FAILED;
		pane_locals_set(tui_pane(t, &pane_locals_ops), in->frame.function, NULL, "the agent is gone");
	}
	if (!t->exited)
		tui_status(t, true, "agent lost: %s (L loads it again)", cause ? cause : "?");
	t->dirty = true;
}

void
inside_quiesce(struct tui *t)
{
	struct inside *in = t->inside;
	struct session *s = sess(t);

	if (in == NULL || in->job == JOB_NONE)
		return;
	if (s != NULL) {
		session_cancel(s, in->id, NULL);
		session_forget(s, in->id);
	}
	if (in->job == JOB_LOCALS && in->locals == LOCALS_ASKING) {
		in->locals = LOCALS_FAILED;
		pane_locals_set(tui_pane(t, &pane_locals_ops), in->frame.function, NULL,
		    "not asked: another request came first (L asks again)");
	}
	in->job = JOB_NONE;
}

/* A `threads` request: names, and the locals of `limit` frames per stack when asked. */
static bool
send_job(struct tui *t, enum job job, bool locals, long long limit)
{
	struct inside *in = t->inside;
	struct session *s = sess(t);
	char *cause = NULL;

	if (s == NULL)
		return false;
	inside_quiesce(t);
	if (agent_threads_send(s, locals, false, limit, &in->id, &cause) != FP_OK) {
		lost(t, cause);
		free(cause);
		return false;
	}
	in->job = job;
	in->sent_ns = now_ns();
	return true;
}

static void
ask_names(struct tui *t)
{
	struct inside *in = t->inside;

	in->names_due_ns = now_ns() + (uint64_t)INSIDE_NAMES_EVERY_MS * 1000000;
	send_job(t, JOB_NAMES, false, 1);
}

static void
ask_locals(struct tui *t)
{
	struct inside *in = t->inside;
	size_t limit = in->frame.nframes + 64;

	if (!in->frame.set || !in->frame.python)
		return;
	if (limit > 5000)
		limit = 5000;
	inside_quiesce(t);	/* before saying we ask: it may drop an earlier ask */
	in->locals = LOCALS_ASKING;
	pane_locals_set(tui_pane(t, &pane_locals_ops), in->frame.function, NULL, "asking the agent...");
	if (!send_job(t, JOB_LOCALS, true, (long long)limit)) {
		in->locals = LOCALS_FAILED;
		pane_locals_set(tui_pane(t, &pane_locals_ops), in->frame.function, NULL,
		    "the agent is not attached (L attaches it)");
	}
}

/* The locals pane is shown with the source when there is something to say. */
static void
show_locals_pane(struct tui *t)
{
	struct inside *in = t->inside;

	if (tui_pane(t, &pane_source_ops)->visible && in->frame.set && in->frame.python &&
	    in->locals != LOCALS_NONE)
		tui_show_pane(t, tui_pane(t, &pane_locals_ops), false);
	else if (tui_pane(t, &pane_locals_ops)->visible)
		tui_hide_pane(t, tui_pane(t, &pane_locals_ops));
}

/*
 * Loading runs our code inside someone's process: ask once per process (an
 * agent an earlier session left there is used without asking).
 */
bool
inside_may_load(struct tui *t, const char *cmd)
{
	int pid = (int)t->pid;
	char *forms[3], *q;
	size_t i;
	bool yes;

	if (t->inside->load_ok || runner_attach(t->runner, false, NULL) == FP_OK)
		return true;
	/* the longest that fits the status line */
	forms[0] = xasprintf("Load the agent into process %d? Its code runs inside the process; it "
	    "leaves a small library and a socket in /tmp/.flight_profiler-%d, reused by later "
	    "sessions. [y/N]", pid, pid);
	forms[1] = xasprintf("Load the agent? Its code runs inside %d; library and socket in "
	    "/tmp/.flight_profiler-%d stay for reuse [y/N]", pid, pid);
	forms[2] = xasprintf("Run our agent in %d? Leaves lib+socket in /tmp/.flight_profiler-%d "
	    "[y/N]", pid, pid);
	for (i = 0; i < 2 && (int)strlen(forms[i]) >= COLS; i++)
		;
	q = forms[i];
	yes = tui_confirm(t, q);
	for (i = 0; i < 3; i++)
		free(forms[i]);
	if (!yes && cmd != NULL) {
		tui_status(t, false, "%s: not run, the agent was not loaded (:%s asks again)", cmd,
		    cmd);
		t->dirty = true;
		return false;
	}
	if (!yes) {
		tui_status(t, false, "the agent was not loaded (c or L asks again)");
		t->dirty = true;
		return false;
	}
	t->inside->load_ok = true;
	return true;
}

bool
inside_attach(struct tui *t, bool load, bool quiet)
{
	char *cause = NULL;
	int rc;

	if (t->runner == NULL || t->exited) {
		if (!quiet && t->exited)
			tui_status(t, true, "process %d exited: there is no agent to talk to", (int)t->pid);
		return false;
	}
	if (sess(t) != NULL) {
		if (!quiet)
			tui_status(t, false, "the agent is attached");
		return true;
	}
	if (load && !quiet && !inside_may_load(t, NULL))
		return false;
	if (load && !quiet) {
		/* Loading takes a moment: say so before the screen waits. */
		tui_status(t, false, "loading the agent into process %d...", (int)t->pid);
		tui_draw(t);
	}
	rc = runner_attach(t->runner, load, &cause);
	if (rc != FP_OK) {
		if (!quiet)
			tui_status(t, true, "%s", cause ? cause : "cannot attach the agent");
		free(cause);
		t->dirty = true;
		return false;
	}
	if (!quiet)
		tui_status(t, false, "agent attached: thread names, locals, completion, console (c); "
		    "it stays loaded");
	t->dirty = true;
	if (tui_pane(t, &pane_source_ops)->visible && t->inside->frame.python &&
	    t->inside->locals == LOCALS_NONE) {
		ask_locals(t);	/* the source view waited for them */
		show_locals_pane(t);
	} else {
		t->inside->names_due_ns = 0;	/* ask at once */
		inside_tick(t);
	}
	return true;
}

static void
answered(struct tui *t, struct proto_msg *end)
{
	struct inside *in = t->inside;
	enum job job = in->job;
	struct agent_threads *m = agent_threads_from_end(end);
	const struct agent_frame *a;

	in->job = JOB_NONE;
	/* Both answers carry the names (locals' too). */
	if (m->has_names) {
		agent_threads_free(in->names);
		in->names = m;	/* kept whole: m stays valid below */
		if (t->snap != NULL) {
			render_apply_thread_names(t->snap, in->names);
			pane_threads_ops.event(tui_pane(t, &pane_threads_ops),
			    &(struct pane_event){ .kind = EV_SNAPSHOT });
		}
	}
	t->dirty = true;
	if (job == JOB_NAMES) {
		if (m != in->names)
			agent_threads_free(m);
		return;
	}
	if (!end->ok) {
		char *why = xasprintf("the agent could not read them: %s", end->error);

		in->locals = LOCALS_FAILED;
		pane_locals_set(tui_pane(t, &pane_locals_ops), in->frame.function, NULL, why);
		free(why);
	} else if ((a = agent_threads_frame(m, in->frame.thread_id, in->frame.nframes,
	    in->frame.index, in->frame.file, in->frame.function)) == NULL) {
		in->locals = LOCALS_FAILED;
		pane_locals_set(tui_pane(t, &pane_locals_ops), in->frame.function, NULL,
		    "the thread has left this frame since the snapshot (Enter on the stack shows the "
		    "current one)");
	} else {
		in->locals = LOCALS_SHOWN;
		pane_locals_set(tui_pane(t, &pane_locals_ops), in->frame.function, &a->locals, NULL);
	}
	show_locals_pane(t);
	t->dirty = true;
	if (m != in->names)
		agent_threads_free(m);
}

int
inside_tick(struct tui *t)
{
	struct inside *in = t->inside;
	struct session *s;
	struct proto_msg msg;
	char *cause = NULL;
	uint64_t now = now_ns();
	int rc;

	if (in == NULL || t->busy || t->exited || t->runner == NULL ||
	    (s = sess(t)) == NULL)
		return -1;
	while (in->job != JOB_NONE) {
		/* 1 ms: a zero timeout would not even look at the socket */
		rc = session_next(s, in->id, 1, &msg, &cause);
		if (rc != FP_OK) {
			lost(t, cause);
			free(cause);
			return -1;
		}
		if (msg.root == NULL) {
			uint64_t limit = in->job == JOB_NAMES ? NAMES_TIMEOUT_MS : LOCALS_TIMEOUT_MS;

			if (now - in->sent_ns < limit * 1000000)
				return 20;
			if (in->job == JOB_LOCALS) {
				char *why = session_running(s, in->id) == 1 ?
				    xasprintf("still running after %d s (a slow __repr__?): cancelled "
				    "(L asks again)", LOCALS_TIMEOUT_MS / 1000) :
				    xasprintf("no answer within %d s: a thread may hold the GIL in a "
				    "C call (L asks again)", LOCALS_TIMEOUT_MS / 1000);

				session_cancel(s, in->id, NULL);
				session_forget(s, in->id);
				in->job = JOB_NONE;
				in->locals = LOCALS_FAILED;
				pane_locals_set(tui_pane(t, &pane_locals_ops), in->frame.function, NULL, why);
				free(why);
				t->dirty = true;
			} else {
				inside_quiesce(t);
			}
			break;
		}
		if (msg.type == PROTO_END)
			answered(t, &msg);
		proto_msg_clear(&msg);
	}
	if (in->job != JOB_NONE)
		return 20;
	if (t->paused)
		return -1;
	if (now >= in->names_due_ns) {
		ask_names(t);
		return 20;
	}
	return (int)((in->names_due_ns - now) / 1000000) + 1;
}

void
inside_apply_names(struct tui *t, struct py_snapshot *snap)
{
	if (t->inside != NULL && t->inside->names != NULL)
		render_apply_thread_names(snap, t->inside->names);
}

void
inside_frame(struct tui *t, const struct py_thread *th, size_t index)
{
	struct inside *in = t->inside;
	struct frame_ref *f = &in->frame;

	if (in->job == JOB_LOCALS)
		inside_quiesce(t);
	frame_clear(f);
	f->set = true;
	f->python = index != SIZE_MAX && index < th->nframes;
	in->locals = LOCALS_NONE;
	if (f->python) {
		f->thread_id = th->thread_id;
		f->nframes = th->nframes;
		f->index = index;
		f->file = xstrdup(th->frames[index].filename);
		f->function = xstrdup(render_frame_function(&th->frames[index]));
		if (sess(t) != NULL)
			ask_locals(t);
	}
	show_locals_pane(t);
}

void
inside_reload_locals(struct tui *t)
{
	struct inside *in = t->inside;

	if (!inside_attach(t, true, false))
		return;
	if (!tui_pane(t, &pane_source_ops)->visible || !in->frame.set)
		return;
	if (!in->frame.python) {
		tui_status(t, true, "a native frame has no Python locals");
		return;
	}
	if (in->locals != LOCALS_ASKING)
		ask_locals(t);
	show_locals_pane(t);
}

const char *
inside_locals_hint(struct tui *t)
{
	struct inside *in = t->inside;

	if (!in->frame.set)
		return "";
	if (!in->frame.python)
		return "locals: a native frame has none";
	if (sess(t) == NULL)
		return inside_state(t) == RUNNER_AGENT_LOST ?
		    "locals: the agent was lost: press L to attach it again" :
		    "locals: press L to attach the agent";
	switch (in->locals) {
	case LOCALS_NONE:
		return "locals: press L to read them";
	case LOCALS_ASKING:
		return "locals: asking the agent...";
	case LOCALS_SHOWN:
		return "locals: below, as the agent read them (L reads them again)";
	default:
		return "locals: below (L asks again)";
	}
}

/* ---- completion ------------------------------------------------------------ */

/*
 * Run in the target by `execute` (a fresh namespace, on an agent worker):
 * looks things up in sys.modules and in __dict__s only, so it imports
 * nothing and runs no property, __getattr__ or __dir__ of the program.
 * Runs on CPython 3.8 and later.
 */
static const char complete_py[] =
    "import sys\n"
    "def _fp_ns(o):\n"
    "    if isinstance(o, type):\n"
    "        d = {}\n"
    "        for c in reversed(o.__mro__):\n"
    "            if c is not object:\n"
    "                d.update(c.__dict__)\n"
    "        return d\n"
    "    d = getattr(o, '__dict__', None) if isinstance(o, type(sys)) else None\n"
    "    return dict(d) if isinstance(d, dict) else {}\n"
    "def _fp_names(kind, mod, cls, pre, most):\n"
    "    hide = not pre.startswith('_')\n"
    "    if kind == 0:\n"
    "        depth = pre.count('.')\n"
    "        out = set()\n"
    "        for k in list(sys.modules):\n"
    "            if isinstance(k, str) and k.startswith(pre):\n"
    "                k = '.'.join(k.split('.')[:depth + 1])\n"
    "                if not (hide and k.rsplit('.', 1)[-1].startswith('_')) or k == '__main__':\n"
    "                    out.add(k)\n"
    "        return sorted(out)[:most]\n"
    "    o = sys.modules.get(mod)\n"
    "    if o is None:\n"
    "        raise LookupError('no module %r is imported in the process' % mod)\n"
    "    for part in (cls.split('.') if kind == 3 else []):\n"
    "        o = _fp_ns(o).get(part)\n"
    "        if not isinstance(o, type):\n"
    "            raise LookupError('%s is not a class in module %s' % (cls, mod))\n"
    "    d = _fp_ns(o)\n"
    "    out = [k for k, v in d.items() if isinstance(k, str) and k.isidentifier()\n"
    "           and k.startswith(pre) and not (hide and k.startswith('_'))\n"
    "           and (kind != 2 or isinstance(v, type))]\n"
    "    return sorted(out)[:most]\n";

struct collect {
	struct sbuf out;
};

char **
inside_names(void *ctx, enum cmdline_names kind, const char *module, const char *cls,
    const char *prefix, size_t *n, char **cause)
{
	struct tui *t = ctx;
	struct session *s = sess(t);
	struct sbuf code = { 0 }, out = { 0 };
	struct proto_msg msg;
	uint64_t id, deadline = now_ns() + (uint64_t)INSIDE_COMPLETE_MS * 1000000;
	char **names = NULL, *arg[3], *line, *save = NULL;
	const char *v[3] = { module ? module : "", cls ? cls : "", prefix };
	size_t nnames = 0, anames = 0, i;
	int rc;

	*n = 0;
	*cause = NULL;
	if (s == NULL || t->busy)
		return NULL;
	inside_quiesce(t);
	for (i = 0; i < 3; i++)
		arg[i] = statement_str_literal(v[i]);
	if (arg[0] == NULL || arg[1] == NULL || arg[2] == NULL) {
		for (i = 0; i < 3; i++)
			free(arg[i]);
		*cause = xstrdup("completion: the words are not valid UTF-8");
		return NULL;
	}
	sbuf_addf(&code, "%sprint('\\n'.join(_fp_names(%d, %s, %s, %s, %d)))\n", complete_py, (int)kind,
	    arg[0], arg[1], arg[2], COMPLETE_MAX);
	for (i = 0; i < 3; i++)
		free(arg[i]);
	rc = statement_send(s, "execute", code.s, "<flight_profiler completion>", &id, cause);
	sbuf_free(&code);
	if (rc != FP_OK) {
		if (rc != FP_EUSAGE)
			lost(t, *cause);
		return NULL;
	}
	for (;;) {
		uint64_t now = now_ns();

		if (now >= deadline) {
			session_cancel(s, id, NULL);
			session_forget(s, id);
			*cause = xasprintf("completion: no answer from the agent within %.1f s (a thread "
			    "may hold the GIL)", INSIDE_COMPLETE_MS / 1000.0);
			break;
		}
		rc = session_next(s, id, (int)((deadline - now) / 1000000) + 1, &msg, cause);
		if (rc != FP_OK) {
			lost(t, *cause);
			break;
		}
		if (msg.root == NULL)
			continue;
		if (msg.type == PROTO_EVENT) {
			struct output_chunk chunk;

			if (output_chunk_from_msg(&msg, &chunk))
				sbuf_add(&out, chunk.text);
			output_chunk_clear(&chunk);
			proto_msg_clear(&msg);
			continue;
		}
		if (!msg.ok) {
			struct statement_end e;

			statement_end_from_msg(&msg, &e);
			*cause = xasprintf("completion: %s", e.message ? e.message :
			    msg.error ? msg.error : "failed");
			statement_end_clear(&e);
		} else {
			for (line = strtok_r(out.s ? out.s : "", "\n", &save); line != NULL;
			    line = strtok_r(NULL, "\n", &save))
				*ARRAY_PUSH(names, nnames, anames) = xstrdup(line);
			*ARRAY_PUSH(names, nnames, anames) = NULL;
			*n = nnames - 1;
		}
		proto_msg_clear(&msg);
		break;
	}
	sbuf_free(&out);
	return names;
}
