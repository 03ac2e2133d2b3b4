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
	const struct proc_member *m;
	struct sampler *s;	/* NULL: skipped */
	char *label;
	char *skip;		/* why it was not sampled */
	int rc;			/* and the status that says it */
};

struct sink_ctx {
	struct profile *prof;
	struct member *mv;
	size_t n, last;
	bool merge;
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

char *
perfset_label(pid_t pid, const char *cmdline)
{
	char path[LABEL_CMDLINE + 8], *env, *label = NULL;
	size_t len = 0;
	long rank;

	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	if ((env = read_file_str(path, &len)) != NULL) {
		if (env_number(env, len, "RANK", &rank))
			label = xasprintf("rank %ld (pid %d)", rank, (int)pid);
		else if (env_number(env, len, "LOCAL_RANK", &rank))
			label = xasprintf("local rank %ld (pid %d)", rank, (int)pid);
		free(env);
	}
	if (label != NULL)
		return label;
	return xasprintf("pid %d%s", (int)pid, short_cmdline(cmdline, path, sizeof path));
}

static void
set_sink(void *arg, const struct sample *smp)
{
	struct sink_ctx *c = arg;
	size_t i;

	if (c->merge) {
		profile_add(c->prof, smp);
		return;
	}
	/* A tick reads the members in order: the last one found is the usual answer. */
	for (i = 0; i < c->n; i++) {
		size_t k = (c->last + i) % c->n;

		if (c->mv[k].s != NULL && sampler_pid(c->mv[k].s) == smp->pid) {
			c->last = k;
			profile_add_in(c->prof, c->mv[k].label, smp);
			return;
		}
	}
}

/* Open a sampler on every member that is Python; the others get a reason. */
static size_t
open_members(struct member *mv, const struct proc_set *set, const struct perfset_opts *o)
{
	size_t i, nopen = 0;
	char *why;

	for (i = 0; i < set->n; i++) {
		mv[i].m = &set->m[i];
		why = NULL;
		if (set->m[i].cmdline == NULL) {
			mv[i].skip = xstrdup("exited");
			mv[i].rc = FP_EEXITED;
		} else if ((mv[i].rc = sampler_open(set->m[i].pid, &o->so, &mv[i].s, &why)) != FP_OK)
			mv[i].skip = why != NULL ? why : xstrdup("unreadable");
		else
			nopen++;
		mv[i].label = perfset_label(set->m[i].pid, set->m[i].cmdline);
	}
	return nopen;
}

/* The whole loop's figures: the members' reads summed, its ticks once. */
static char *
set_summary(struct sampler **sv, size_t n)
{
	uint64_t ticks = 0, reads = 0, samples = 0, torn = 0, tr = 0, failed = 0, cpu = 0, busy = 0;
	double secs = n > 0 ? (double)sampler_stats(sv[0])->elapsed_ns / 1e9 : 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct sampler_stats *st = sampler_stats(sv[i]);

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
	    (unsigned long long)samples, (unsigned long long)reads, n, n == 1 ? "" : "es", secs,
	    secs > 0 ? (double)ticks / secs : 0, tr > 0 ? 100.0 * (double)torn / (double)tr : 0,
	    (unsigned long long)failed, ticks > 0 ? (double)cpu / 1e3 / (double)ticks : 0,
	    secs > 0 ? 100.0 * (double)busy / 1e9 / secs : 0);
}

/* What happened to each member, after the write's line. */
static void
report_members(struct sbuf *out, const struct member *mv, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct sampler_stats *st = mv[i].s != NULL ? sampler_stats(mv[i].s) : NULL;

		if (st == NULL)
			continue;
		termsafe_addf(out, "  %s: %llu samples", mv[i].label, (unsigned long long)st->samples);
		if (st->exited)
			sbuf_add(out, " (exited while sampled: kept what it had)");
		else if (sampler_gave_up(mv[i].s) != NULL)
			termsafe_addf(out, " (given up: %s)", sampler_gave_up(mv[i].s));
		sbuf_add(out, "\n");
	}
	for (i = 0; i < n; i++)
		if (mv[i].s == NULL)
			termsafe_addf(out, "  skipped pid %d (%s): %s\n", (int)mv[i].m->pid,
			    mv[i].m->cmdline != NULL ? mv[i].m->cmdline : "?", mv[i].skip);
}

static int
sample_and_write(struct member *mv, size_t n, const struct perfset_opts *o, int fd,
    struct sbuf *out, char **cause)
{
	struct sampler **sv = xcalloc(n, sizeof *sv);
	struct sink_ctx c = { profile_new(o->threads), mv, n, 0, o->merge };
	char *summary, *title;
	size_t i, k = 0;
	int rc;

	for (i = 0; i < n; i++)
		if (mv[i].s != NULL)
			sv[k++] = mv[i].s;
	rc = perf_sample(sv, k, set_sink, &c, cause);
	summary = set_summary(sv, k);
	title = xasprintf("flight_profiler perf: %zu process%s%s, CPython %s, mode %s%s", k,
	    k == 1 ? "" : "es", o->merge ? " merged" : "", sampler_version(sv[0]), perf_mode_name(o->so.mode),
	    o->so.idle ? " (with idle)" : "");
	rc = perf_write_kept(rc, fd, c.prof, o->format, o->file, title, summary, cause);
	if (rc == FP_OK) {
		termsafe_addf(out, "Write %s to %s successfully! %s\n", perf_format_name(o->format),
		    o->file, summary);
		report_members(out, mv, n);
	}
	free(summary);
	free(title);
	profile_free(c.prof);
	free(sv);
	return rc;
}

int
perfset_run(const struct proc_set *set, const struct perfset_opts *o, struct sbuf *out,
    char **cause)
{
	struct member *mv = xcalloc(set->n ? set->n : 1, sizeof *mv);
	size_t i, nopen = open_members(mv, set, o);
	int fd, rc = FP_OK;

	if (nopen == 0 && set->n == 1) {
		rc = termsafe_fail(cause, mv[0].rc, "perf: pid %d: %s", (int)set->m[0].pid, mv[0].skip);
	} else if (nopen == 0) {
		rc = termsafe_fail(cause, FP_ENOTPY, "perf: none of the %zu processes of the set is "
		    "Python (pid %d: %s)", set->n, (int)set->m[0].pid, mv[0].skip);
	} else if ((fd = perf_open_output(o->file, cause)) < 0) {
		rc = -fd;
	} else {
		rc = sample_and_write(mv, set->n, o, fd, out, cause);
	}
	for (i = 0; i < set->n; i++) {
		sampler_close(mv[i].s);
		free(mv[i].label);
		free(mv[i].skip);
	}
	free(mv);
	return rc;
}
