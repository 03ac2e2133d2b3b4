/*
 * perfset — `perf` over a set of processes (see perfset.h).
 */
#include "config.h"

#include "core/perfset.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/perf_cmd.h"
#include "core/profile.h"
#include "core/termsafe.h"

/* A command line longer than this is cut in a root frame's label. */
#define LABEL_CMDLINE	60

/* A member being sampled: its sampler and root frame. */
struct member {
	pid_t pid;
	char *cmdline;		/* NULL when it was gone already */
	struct sampler *s;	/* NULL: skipped */
	char *label;
	char *skip;		/* why it was not sampled */
	int rc;			/* and the status that says it */
	double joined_s;	/* found this long after sampling began; 0 = from the start */
};

/* One perf over a set: the members (growing as a tree or match is followed). */
struct run {
	const struct proc_set_spec *spec;
	const struct perfset_opts *o;
	struct member *mv;
	size_t n, a, last;
	struct sampler_set set;
	size_t aset;
	struct profile *prof;
	uint64_t start_ns;	/* 0 until sampling begins */
};

/*
 * The value of `name` in the process's first environment (what it was
 * started with: torchrun sets RANK there), when it is a plain number.
 */
static bool
env_number(const char *env, size_t len, const char *name, long *value)
{
	size_t nl = strlen(name), i = 0;

	while (i < len) {
		const char *e = env + i;
		size_t el = strnlen(e, len - i);

		if (el > nl && strncmp(e, name, nl) == 0 && e[nl] == '=') {
			const char *v = e + nl + 1;
			char *end;

			if (!isdigit((unsigned char)*v) || el - nl - 1 > 9)
				return false;
			*value = strtol(v, &end, 10);
			return *end == '\0';
		}
		i += el + 1;
	}
	return false;
}

/*
 * " python3 train.py" for "/usr/bin/python3 /home/u/train.py": words that
 * are absolute paths by their last part, cut at LABEL_CMDLINE (a flame's
 * root frame is read at a glance), into buf; "" when there is none.
 */
static const char *
short_cmdline(const char *cmdline, char *buf, size_t size)
{
	struct sbuf b = { 0 };
	const char *w = cmdline, *end, *slash;

	while (w != NULL && *w != '\0') {
		end = strchr(w, ' ');
		if (end == NULL)
			end = w + strlen(w);
		if (*w == '/')
			while ((slash = memchr(w, '/', (size_t)(end - w))) != NULL && slash + 1 < end)
				w = slash + 1;
		if (end > w)
			sbuf_addf(&b, " %.*s", (int)(end - w), w);
		w = *end != '\0' ? end + 1 : end;
	}
	if (b.len > LABEL_CMDLINE + 1)
		snprintf(buf, size, "%.*s...", LABEL_CMDLINE + 1, b.s);
	else
		snprintf(buf, size, "%s", b.s != NULL ? b.s : "");
	sbuf_free(&b);
	return buf;
}

bool
perfset_rank(pid_t pid, long *rank, bool *local)
{
	char path[32], *env;
	size_t len = 0;
	bool found = false;

	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	if ((env = read_file_str(path, &len)) != NULL) {
		*local = false;
		if (!(found = env_number(env, len, "RANK", rank)))
			found = *local = env_number(env, len, "LOCAL_RANK", rank);
		free(env);
	}
	return found;
}

char *
perfset_label(pid_t pid, const char *cmdline)
{
	char buf[LABEL_CMDLINE + 8];
	long rank;
	bool local;

	if (perfset_rank(pid, &rank, &local))
		return xasprintf("%srank %ld (pid %d)", local ? "local " : "", rank, (int)pid);
	return xasprintf("pid %d%s", (int)pid, short_cmdline(cmdline, buf, sizeof buf));
}

static void
set_sink(void *arg, const struct sample *smp)
{
	struct run *r = arg;
	size_t i;

	if (r->o->merge) {
		profile_add(r->prof, smp);
		return;
	}
	/* A tick reads the members in order: the last one found is the usual answer. */
	for (i = 0; i < r->n; i++) {
		size_t k = (r->last + i) % r->n;

		if (r->mv[k].s != NULL && r->mv[k].pid == smp->pid) {
			r->last = k;
			profile_add_in(r->prof, r->mv[k].label, smp);
			return;
		}
	}
}

/* Add a member: opened when it is Python, else kept with the reason. */
static void
add_member(struct run *r, const struct proc_member *pm)
{
	struct member *m = ARRAY_PUSH(r->mv, r->n, r->a);
	char *why = NULL;

	memset(m, 0, sizeof *m);
	m->pid = pm->pid;
	m->cmdline = pm->cmdline != NULL ? xstrdup(pm->cmdline) : NULL;
	if (r->start_ns != 0)
		m->joined_s = (double)(now_ns() - r->start_ns) / 1e9;
	if (pm->cmdline == NULL) {
		m->skip = xstrdup("exited");
		m->rc = FP_EEXITED;
	} else if ((m->rc = sampler_open(pm->pid, &r->o->so, &m->s, &why)) != FP_OK) {
		m->skip = why != NULL ? why : xstrdup("unreadable");
	} else {
		*(struct sampler **)ARRAY_PUSH(r->set.sv, r->set.n, r->aset) = m->s;
	}
	m->label = perfset_label(pm->pid, pm->cmdline);
}

static bool
is_member(const struct run *r, pid_t pid)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->mv[i].pid == pid)
			return true;
	return false;
}

/* sampler_set.grow: the tree or the match again, its new processes added. */
static void
grow(struct sampler_set *set, void *arg)
{
	struct run *r = arg;
	struct proc_set now;
	char *why = NULL;
	size_t i;

	(void)set;
	if (procset_resolve(r->spec, &now, &why) != FP_OK) {
		free(why);	/* none left for now: the members still there go on */
		return;
	}
	for (i = 0; i < now.n; i++)
		if (!is_member(r, now.m[i].pid))
			add_member(r, &now.m[i]);
	procset_clear(&now);
}

/* The whole loop's figures: the members' reads summed, its ticks once. */
static char *
set_summary(const struct sampler_set *set)
{
	uint64_t ticks = 0, reads = 0, samples = 0, torn = 0, tr = 0, failed = 0, cpu = 0, busy = 0;
	double secs = (double)sampler_stats(set->sv[0])->elapsed_ns / 1e9;
	size_t i;

	for (i = 0; i < set->n; i++) {
		const struct sampler_stats *st = sampler_stats(set->sv[i]);

		ticks = st->ticks > ticks ? st->ticks : ticks;
		reads += st->ticks;
		samples += st->samples;
		torn += st->torn;
		tr += st->thread_reads;
		failed += st->failed;
		cpu += st->cpu_ns;
		busy += st->busy_ns;
	}
	return xasprintf("%llu samples from %llu reads of %zu process%s in %.1f s (%.1f ticks a "
	    "second), %.2f%% torn, %llu failed reads, %.1f us CPU per tick, %.0f%% busy",
	    (unsigned long long)samples, (unsigned long long)reads, set->n,
	    set->n == 1 ? "" : "es", secs, secs > 0 ? (double)ticks / secs : 0,
	    tr > 0 ? 100.0 * (double)torn / (double)tr : 0, (unsigned long long)failed,
	    ticks > 0 ? (double)cpu / 1e3 / (double)ticks : 0,
	    secs > 0 ? 100.0 * (double)busy / 1e9 / secs : 0);
}

/* What happened to each member, after the write's line. */
static void
report_members(struct sbuf *out, const struct run *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct member *m = &r->mv[i];
		const struct sampler_stats *st = m->s != NULL ? sampler_stats(m->s) : NULL;

		if (st == NULL)
			continue;
		termsafe_addf(out, "  %s: %llu samples", m->label, (unsigned long long)st->samples);
		if (m->joined_s > 0)
			sbuf_addf(out, " (joined after %.1f s)", m->joined_s);
		if (st->exited)
			sbuf_add(out, " (exited while sampled: kept what it had)");
		else if (sampler_gave_up(m->s) != NULL)
			termsafe_addf(out, " (given up: %s)", sampler_gave_up(m->s));
		sbuf_add(out, "\n");
	}
	for (i = 0; i < r->n; i++)
		if (r->mv[i].s == NULL)
			termsafe_addf(out, "  skipped pid %d (%s): %s\n", (int)r->mv[i].pid,
			    r->mv[i].cmdline != NULL ? r->mv[i].cmdline : "?", r->mv[i].skip);
}

static int
sample_and_write(struct run *r, int fd, struct sbuf *out, char **cause)
{
	const struct perfset_opts *o = r->o;
	char *summary, *title;
	int rc;

	r->prof = profile_new(o->threads);
	/* A tree or a match is followed as processes come; a list of pids is what it is. */
	if (r->spec->tree || r->spec->match != NULL) {
		r->set.grow = grow;
		r->set.grow_arg = r;
	}
	r->start_ns = now_ns();
	rc = perf_sample(&r->set, set_sink, r, cause);
	summary = set_summary(&r->set);
	title = xasprintf("flight_profiler perf: %zu process%s%s, CPython %s, mode %s%s", r->set.n,
	    r->set.n == 1 ? "" : "es", o->merge ? " merged" : "", sampler_version(r->set.sv[0]),
	    perf_mode_name(o->so.mode), o->so.idle ? " (with idle)" : "");
	if (fd >= 0)
		rc = perf_write_kept(rc, fd, r->prof, o->format, o->file, title, summary, cause);
	if (rc == FP_OK && o->profiled != NULL)
		o->profiled(o->profiled_arg, r->prof, summary, r->set.n);
	if (rc == FP_OK && fd >= 0) {
		termsafe_addf(out, "Write %s to %s successfully! %s\n", perf_format_name(o->format),
		    o->file, summary);
		report_members(out, r);
	}
	free(summary);
	free(title);
	return rc;
}

int
perfset_run(const struct proc_set_spec *spec, const struct perfset_opts *o, struct sbuf *out,
    char **cause)
{
	struct run r = { .spec = spec, .o = o };
	struct proc_set set;
	size_t i;
	int fd = -1, rc;

	if ((rc = procset_resolve(spec, &set, cause)) != FP_OK)
		return rc;
	for (i = 0; i < set.n; i++)
		add_member(&r, &set.m[i]);
	procset_clear(&set);
	if (r.set.n == 0 && r.n == 1) {
		rc = termsafe_fail(cause, r.mv[0].rc, "perf: pid %d: %s", (int)r.mv[0].pid, r.mv[0].skip);
	} else if (r.set.n == 0) {
		rc = termsafe_fail(cause, FP_ENOTPY, "perf: none of the %zu processes of the set is "
		    "Python (pid %d: %s)", r.n, (int)r.mv[0].pid, r.mv[0].skip);
	} else if (o->file != NULL && (fd = perf_open_output(o->file, cause)) < 0) {
		rc = -fd;
	} else {
		rc = sample_and_write(&r, fd, out, cause);
	}
	for (i = 0; i < r.n; i++) {
		sampler_close(r.mv[i].s);
		free(r.mv[i].cmdline);
		free(r.mv[i].label);
		free(r.mv[i].skip);
	}
	free(r.mv);
	free(r.set.sv);
	profile_free(r.prof);
	return rc;
}
