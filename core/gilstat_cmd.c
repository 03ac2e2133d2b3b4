#include "config.h"

#include "core/gilstat_cmd.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/gilprobe.h"
#include "core/gilreg.h"
#include "core/gilstat.h"
#include "core/jsonrec.h"
#include "core/procfs.h"
#include "core/pyruntime.h"
#include "core/pystack.h"
#include "core/runner.h"
#include "core/runner_int.h"
#include "core/termsafe.h"

#define DEFAULT_INTERVAL_S	5.0
#define DEFAULT_MAX_THREADS	20
/* How long one wait for probe events lasts. */
#define POLL_MS			100
/* Warnings come out in batches this often: one heading a second, not a flood. */
#define WARN_EVERY_NS		1000000000u
/* Statistical mode: snapshots per second (each reads /proc for the wait state). */
#define SAMPLE_HZ		200
/* How long `gilstat off` waits for the `on` it ended to be over. */
#define OFF_WAIT_MS		10000

struct gilstat_run {
	struct runner *r;
	pid_t pid;
	struct py_reader *reader;
	struct gilprobe *gp;		/* NULL: statistical */
	struct gilstat *gs;
	uint64_t interval_ns;
	char *header;
	uint64_t start_ns;
	bool json;			/* records (doc/json.md), not text */
};

static volatile sig_atomic_t gil_stop;

static void
on_signal(int sig)
{
	(void)sig;
	gil_stop = 1;
}

/* `gilstat off` where `on` runs in this very process. */
static void
stop_here(void)
{
	gil_stop = 1;
}

/* SIGINT, SIGTERM, SIGHUP end `on` the same way: probes closed, last report printed. */
static void
signals_catch(struct sigaction old[3])
{
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	int i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	gil_stop = 0;
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
}

static void
signals_restore(const struct sigaction old[3])
{
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
	sigaction(SIGHUP, &old[2], NULL);
}

static int
number_arg(const struct cmd_request *req, const char *name, double dflt, double *v,
    char **cause)
{
	const char *s = command_arg(req, name);
	char *end;

	*v = dflt;
	if (s == NULL)
		return FP_OK;
	errno = 0;
	*v = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || errno != 0 || !isfinite(*v) || *v < 0)
		return termsafe_fail(cause, FP_EUSAGE, "gilstat on: %s \"%s\" must be a number from 0 "
		    "up", name, s);
	return FP_OK;
}

static int
parse_on(const struct cmd_request *req, struct gilstat_opts *o, double *interval, char **cause)
{
	double take, hold, maxt;
	int rc;

	if ((rc = number_arg(req, "take_ms", 0, &take, cause)) != FP_OK ||
	    (rc = number_arg(req, "hold_ms", 0, &hold, cause)) != FP_OK ||
	    (rc = number_arg(req, "interval_s", DEFAULT_INTERVAL_S, interval, cause)) != FP_OK ||
	    (rc = number_arg(req, "max_threads", DEFAULT_MAX_THREADS, &maxt, cause)) != FP_OK)
		return rc;
	if (*interval < 0.1)
		return fail(cause, FP_EUSAGE, "gilstat on: interval_s must be at least 0.1 seconds");
	if (maxt < 1 || maxt != floor(maxt) || maxt > 100000)
		return fail(cause, FP_EUSAGE, "gilstat on: max_threads must be a whole number from 1 "
		    "to 100000");
	o->take_ns = (uint64_t)(take * 1e6);
	o->hold_ns = (uint64_t)(hold * 1e6);
	o->max_threads = (unsigned)maxt;
	return FP_OK;
}

/* Python's thread names (threading's), read from outside without stopping anyone. */
static void
refresh_names(struct gilstat_run *g)
{
	struct py_snapshot_opts so = { .max_depth = 1 };
	struct py_snapshot *snap = NULL;
	char *cause = NULL;
	size_t i;

	if (py_reader_snapshot(g->reader, &so, &snap, &cause) == FP_OK)
		for (i = 0; i < snap->nthreads; i++)
			if (snap->threads[i].tid != 0)
				gilstat_name(g->gs, snap->threads[i].tid, snap->threads[i].name);
	py_snapshot_free(snap);
	free(cause);
}

/* --json: rec with the command and the process, written as one line. */
static void
emit_record(struct gilstat_run *g, json_t *rec, json_t *fields)
{
	struct sbuf b = { 0 };

	json_object_set_new(rec, "command", json_string("gilstat on"));
	json_object_set_new(rec, "pid", json_integer(g->pid));
	json_object_update_new(rec, fields);
	jsonrec_emit(&b, rec);
	if (b.s != NULL)
		runner_write(g->r, b.s);
	sbuf_free(&b);
}

static void
emit_report(struct gilstat_run *g, uint64_t now)
{
	struct sbuf b = { 0 };
	char *h;

	if (g->json) {
		json_t *f = gilstat_report_json(g->gs);

		json_object_set_new(f, "since_s", json_real((double)(now - g->start_ns) / 1e9));
		json_object_set_new(f, "lost", json_integer(g->gp != NULL ?
		    (json_int_t)gilprobe_lost(g->gp) : 0));
		emit_record(g, jsonrec_new("gilstat"), f);
		return;
	}
	h = xasprintf("%s, %.1f s since gilstat on", g->header, (double)(now - g->start_ns) / 1e9);
	gilstat_report(g->gs, h, &b);
	if (g->gp != NULL && gilprobe_lost(g->gp) > 0)
		sbuf_addf(&b, "(%llu events lost: the ring buffers were full)\n",
		    (unsigned long long)gilprobe_lost(g->gp));
	runner_write(g->r, b.s);
	sbuf_free(&b);
	free(h);
}

static void
emit_warnings(struct gilstat_run *g)
{
	struct sbuf b = { 0 };
	uint64_t more = 0;
	json_t *w;

	if (g->json) {
		w = gilstat_warnings_json(g->gs, &more);
		if (json_array_size(w) > 0 || more > 0)
			emit_record(g, jsonrec_new("gil_warnings"), json_pack("{s:o,s:I}",
			    "warnings", w, "more", (json_int_t)more));
		else
			json_decref(w);
		return;
	}
	gilstat_warnings(g->gs, &b);
	if (b.len > 0)
		runner_write(g->r, b.s);
	sbuf_free(&b);
}

static void
on_event(void *arg, const struct gilprobe_event *ev)
{
	gilstat_event(arg, ev);
}

/* One statistical tick: every thread's GIL state, as read now. */
static void
sample_tick(struct gilstat_run *g, uint64_t weight)
{
	struct py_snapshot_opts so = { .max_depth = 1 };
	struct py_snapshot *snap = NULL;
	char *cause = NULL;
	size_t i;

	if (py_reader_snapshot(g->reader, &so, &snap, &cause) == FP_OK)
		for (i = 0; i < snap->nthreads; i++) {
			const struct py_thread *t = &snap->threads[i];

			if (t->tid == 0)
				continue;
			gilstat_name(g->gs, t->tid, t->name);
			gilstat_sample(g->gs, t->tid, t->gil, snap->taken_ns, weight);
		}
	py_snapshot_free(snap);
	free(cause);
}

static void
sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);	/* a signal ends it early: the loop looks at gil_stop */
}

/* Until stopped or the target is gone; false when it is gone. */
static bool
loop(struct gilstat_run *g)
{
	uint64_t next_report = g->start_ns + g->interval_ns, period = 1000000000u / SAMPLE_HZ;
	uint64_t last = now_ns(), rnd = (uint64_t)g->pid * 2654435761u + 1, now;
	uint64_t next_warn = g->start_ns + WARN_EVERY_NS;

	for (;;) {
		if (g->gp != NULL) {
			gilprobe_poll(g->gp, POLL_MS, on_event, g->gs);
		} else {
			rnd ^= rnd << 13;
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			sleep_ns(period / 2 + rnd % period);	/* randomised: no aliasing */
			now = now_ns();
			sample_tick(g, now - last);
			last = now;
		}
		if (gil_stop || runner_interrupted(g->r))
			return true;
		if (!procfs_exists(g->pid))
			return false;
		if ((now = now_ns()) >= next_warn) {
			emit_warnings(g);
			next_warn = now + WARN_EVERY_NS;
		}
		if (now >= next_report) {
			if (g->gp != NULL)
				refresh_names(g);
			emit_report(g, now);
			next_report = now + g->interval_ns;
		}
	}
}

static char *
describe(const struct pyruntime *rt, const struct gilprobe *gp, const char *why)
{
	if (gp != NULL)
		return xasprintf("process %d, CPython %s, exact: %s", (int)rt->pid, rt->version,
		    gilprobe_describe(gp));
	return xasprintf("process %d, CPython %s, STATISTICAL (sampled ~%d Hz from outside; "
	    "not exact because %s)", (int)rt->pid, rt->version, SAMPLE_HZ, why);
}

/* The first words: what is measured and how, as a line or a record. */
static void
emit_start(struct gilstat_run *g, const struct pyruntime *rt, double interval,
    struct sbuf *out)
{
	if (g->json) {
		emit_record(g, jsonrec_new("gilstat_on"), json_pack("{s:s,s:b,s:o,s:f}",
		    "python", rt->version, "exact", g->gp != NULL,
		    "how", jsonrec_string(g->header), "interval_s", interval));
		return;
	}
	termsafe_addf(out, "gilstat on: %s; a report every %.1f s, Ctrl-C stops\n", g->header,
	    interval);
	runner_write(g->r, out->s);
	out->len = 0;
	out->s[0] = '\0';
}

static void
emit_end(struct gilstat_run *g, bool alive, struct sbuf *out)
{
	if (g->json)
		emit_record(g, jsonrec_new("end"), json_pack("{s:s}", "how",
		    alive ? "cancelled" : "exited"));
	else
		sbuf_addf(out, alive ? "gilstat off: probes removed\n" :
		    "gilstat off: process %d exited\n", (int)g->pid);
}

static int
gilstat_on(struct runner *r, const struct cmd_request *req, bool json, struct sbuf *out,
    char **cause)
{
	struct gilstat_run g = { .r = r, .pid = runner_pid(r), .json = json };
	struct gilstat_opts o = { 0 };
	struct gilreg *reg = NULL;
	struct sigaction old[3];
	pid_t other;
	const struct pyruntime *rt;
	char *why = NULL;
	double interval;
	bool alive;
	int rc;

	if ((rc = parse_on(req, &o, &interval, cause)) != FP_OK)
		return rc;
	if (g.pid <= 0)
		return fail(cause, FP_EUSAGE, "gilstat: no process attached (flight_profiler PID)");
	if ((rc = py_reader_open(g.pid, &g.reader, cause)) != FP_OK)
		return rc;
	/* Found by `gilstat off` in another client, which cannot close our probes itself. */
	if ((rc = gilreg_claim(g.pid, &reg, &other, cause)) != FP_OK) {
		py_reader_close(g.reader);
		return rc;
	}
	py_reader_may_stop(g.reader, false);
	rt = py_reader_runtime(g.reader);
	if (getenv("FP_GILSTAT_STATISTICAL") != NULL)	/* tests and benchmarks */
		why = xstrdup("FP_GILSTAT_STATISTICAL is set");
	else if (gilprobe_open(g.pid, rt->binary, &g.gp, &why) != FP_OK)
		g.gp = NULL;
	g.gs = gilstat_new(&o, g.gp != NULL);
	g.header = describe(rt, g.gp, why);
	g.interval_ns = (uint64_t)(interval * 1e9);
	g.start_ns = now_ns();
	refresh_names(&g);
	emit_start(&g, rt, interval, out);
	signals_catch(old);
	alive = loop(&g);
	/* The probes go first: nothing of ours stays in the kernel a moment longer. */
	gilprobe_close(g.gp);
	g.gp = NULL;
	gilreg_release(reg);
	signals_restore(old);
	emit_warnings(&g);
	emit_report(&g, now_ns());
	emit_end(&g, alive, out);
	gilstat_free(g.gs);
	py_reader_close(g.reader);
	free(g.header);
	free(why);
	return FP_OK;
}

int
gilstat_cmd_on(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	return gilstat_on(ctx, req, false, out, cause);
}

int
gilstat_on_json(struct runner *r, const struct cmd_request *req, struct sbuf *out,
    char **cause)
{
	return gilstat_on(r, req, true, out, cause);
}

int
gilstat_cmd_off(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	pid_t pid = runner_pid(ctx), runner = 0;
	int rc;

	(void)req;
	if (pid > 0 && (rc = gilreg_stop(pid, &runner, OFF_WAIT_MS, stop_here, cause)) != FP_OK)
		return rc;
	if (runner != 0)
		sbuf_addf(out, "gilstat off: the gilstat on of process %d (in process %d) ended, "
		    "its probes removed\n", (int)pid, (int)runner);
	else
		sbuf_add(out, "gilstat off: gilstat is not on for this process (`gilstat on` runs "
		    "until Ctrl-C or `gilstat off`, and its probes end with it)\n");
	return FP_OK;
}
