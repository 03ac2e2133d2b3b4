#include "config.h"

#include "core/perf_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/flamesvg.h"
#include "core/perfset.h"
#include "core/profile.h"
#include "core/runner.h"
#include "core/sampler.h"
#include "core/termsafe.h"

#define MAX_DURATION_S	31536000.0	/* a year, as the command table says */

enum perf_format { FMT_SVG, FMT_COLLAPSED, FMT_SPEEDSCOPE, FMT_TEXT };

static const char *const format_names[] = { "svg", "collapsed", "speedscope", "text" };
static const char *const default_files[] = {
	"flamegraph.svg", "flamegraph.collapsed", "flamegraph.speedscope.json", "flamegraph.txt",
};
static const char *const mode_names[] = { "wall", "cpu", "gil" };

struct perf_args {
	pid_t pid;
	struct sampler_opts so;
	enum perf_format format;
	bool threads;
	const char *file;
};

static volatile sig_atomic_t perf_sigint;

static void
perf_on_sigint(int sig)
{
	(void)sig;
	perf_sigint = 1;
}

static int
pick(const char *value, const char *const *names, size_t n, const char *what, char **cause)
{
	struct sbuf all = { 0 };
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		if (strcmp(value, names[i]) == 0)
			return (int)i;
	for (i = 0; i < n; i++)
		sbuf_addf(&all, "%s%s", i > 0 ? ", " : "", names[i]);
	rc = termsafe_fail(cause, FP_EUSAGE, "perf: unknown %s \"%s\" (one of: %s)", what, value,
	    all.s);
	sbuf_free(&all);
	return -rc;
}

int
perf_format_named(const char *name)
{
	size_t i;

	for (i = 0; i < FP_NELEM(format_names); i++)
		if (strcmp(name, format_names[i]) == 0)
			return (int)i;
	return -1;
}

/* The format a file name asks for, when --format does not say. */
int
perf_format_of(const char *file)
{
	const char *dot = strrchr(file, '.');

	if (dot == NULL)
		return FMT_SVG;
	if (strcmp(dot, ".json") == 0)
		return FMT_SPEEDSCOPE;
	if (strcmp(dot, ".txt") == 0)
		return FMT_TEXT;
	if (strcmp(dot, ".collapsed") == 0 || strcmp(dot, ".folded") == 0)
		return FMT_COLLAPSED;
	return FMT_SVG;
}

static int
parse_args(pid_t pid, const struct cmd_request *req, struct perf_args *a, char **cause)
{
	const char *v;
	char *end;
	double d;
	long n;
	int k;

	memset(a, 0, sizeof *a);
	a->pid = pid;
	a->so.rate = 100;
	if ((v = command_arg(req, "pid")) != NULL) {
		n = strtol(v, &end, 10);
		if (*v == '\0' || *end != '\0' || n <= 0 || n > 0x7fffffff)
			return termsafe_fail(cause, FP_EUSAGE, "perf: \"%s\" is not a process id", v);
		a->pid = (pid_t)n;
	}
	if ((v = command_opt(req, "--rate")) != NULL) {
		errno = 0;
		n = strtol(v, &end, 10);
		if (*v == '\0' || *end != '\0' || errno != 0 || n < SAMPLER_RATE_MIN || n > SAMPLER_RATE_MAX)
			return termsafe_fail(cause, FP_EUSAGE, "perf: rate \"%s\" out of range: give %d to "
			    "%d samples per second", v, SAMPLER_RATE_MIN, SAMPLER_RATE_MAX);
		a->so.rate = (unsigned)n;
	}
	if ((v = command_opt(req, "--duration")) != NULL) {
		d = strtod(v, &end);
		if (*v == '\0' || *end != '\0' || !isfinite(d) || d <= 0 || d > MAX_DURATION_S)
			return termsafe_fail(cause, FP_EUSAGE, "perf: duration \"%s\" must be more than 0 "
			    "and at most %.0f seconds (leave -d out to sample until Ctrl-C)", v, MAX_DURATION_S);
		a->so.duration_ns = (uint64_t)(d * 1e9);
	}
	if ((v = command_opt(req, "--mode")) != NULL) {
		if ((k = pick(v, mode_names, FP_NELEM(mode_names), "mode", cause)) < 0)
			return -k;
		a->so.mode = (enum sampler_mode)k;
	}
	a->file = command_opt(req, "--filepath");
	if (a->file != NULL && *a->file == '\0')
		return fail(cause, FP_EUSAGE, "perf: -f needs a file name");
	if ((v = command_opt(req, "--format")) != NULL) {
		if ((k = pick(v, format_names, FP_NELEM(format_names), "format", cause)) < 0)
			return -k;
		a->format = (enum perf_format)k;
	} else if (a->file != NULL) {
		a->format = (enum perf_format)perf_format_of(a->file);
	}
	if (a->file == NULL)
		a->file = default_files[a->format];
	a->so.idle = command_opt(req, "--idle") != NULL;
	a->so.native = command_opt(req, "--native") != NULL;
	a->threads = command_opt(req, "--threads") != NULL;
	if (a->pid <= 0)
		return fail(cause, FP_EUSAGE, "perf: no process given (flight_profiler PID, or perf PID)");
	return FP_OK;
}

static void
perf_sink(void *arg, const struct sample *s)
{
	profile_add(arg, s);
}

int
perf_write(const struct profile *prof, int format, FILE *f, const char *title,
    const char *subtitle)
{
	switch ((enum perf_format)format) {
	case FMT_COLLAPSED:
		return profile_write_collapsed(prof, f);
	case FMT_SPEEDSCOPE:
		return profile_write_speedscope(prof, f, title);
	case FMT_TEXT:
		fprintf(f, "%s\n%s\n", title, subtitle);
		return profile_write_text(prof, f, 0);
	case FMT_SVG:
	default:
		return flamesvg_write(prof, f, title, subtitle);
	}
}

/* Sample with Ctrl-C caught: it ends sampling, and what was collected is kept. */
int
perf_sample(struct sampler_set *set, sampler_sink_fn *sink, void *arg, char **cause)
{
	struct sigaction sa, old;
	int rc;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = perf_on_sigint;
	sigemptyset(&sa.sa_mask);
	perf_sigint = 0;
	sigaction(SIGINT, &sa, &old);
	rc = sampler_run_set(set, sink, arg, &perf_sigint, cause);
	sigaction(SIGINT, &old, NULL);
	return rc;
}

int
perf_open_output(const char *file, char **cause)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return -termsafe_fail(cause, FP_ERR, "perf: cannot write %s: %s", file, strerror(errno));
	return fd;
}

int
perf_write_output(int fd, const struct profile *prof, int format, const char *file,
    const char *title, const char *subtitle, char **cause)
{
	FILE *f = NULL;
	int rc = FP_OK;

	if (ftruncate(fd, 0) != 0 || (f = fdopen(fd, "w")) == NULL) {
		rc = termsafe_fail(cause, FP_ERR, "perf: cannot write %s: %s", file, strerror(errno));
		close(fd);
		return rc;
	}
	if (perf_write(prof, format, f, title, subtitle) != 0 || fflush(f) != 0)
		rc = termsafe_fail(cause, FP_ERR, "perf: cannot write %s: %s", file, strerror(errno));
	if (fclose(f) != 0 && rc == FP_OK)
		rc = termsafe_fail(cause, FP_ERR, "perf: cannot write %s: %s", file, strerror(errno));
	return rc;
}

int
perf_write_kept(int rc, int fd, const struct profile *prof, int format, const char *file,
    const char *title, const char *subtitle, char **cause)
{
	char *why = NULL;
	int wrc = perf_write_output(fd, prof, format, file, title, subtitle, &why);

	/* What was collected is written even when sampling ended in an error. */
	if (rc != FP_OK) {
		free(why);
		return rc;
	}
	if (why != NULL)
		*cause = why;
	return wrc;
}

const char *
perf_format_name(int format)
{
	return format_names[format];
}

const char *
perf_mode_name(int mode)
{
	return mode_names[mode];
}

/* perf over the runner's process set (core/perfset). */
static int
perf_over_set(const struct proc_set_spec *spec, const struct perf_args *a,
    const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct perfset_opts o = {
		.so = a->so, .threads = a->threads, .merge = command_opt(req, "--merge") != NULL,
		.format = a->format, .file = a->file,
	};
	return perfset_run(spec, &o, out, cause);
}

int
perf_profile_one(pid_t pid, const struct cmd_request *req, bool always_write,
    struct perf_one *o, char **cause)
{
	struct perf_args a;
	struct sampler_set one = { &o->s, 1, NULL, NULL };
	char *title;
	int fd = -1, rc;

	memset(o, 0, sizeof *o);
	if ((rc = parse_args(pid, req, &a, cause)) != FP_OK)
		return rc;
	if (command_opt(req, "--merge") != NULL)
		return fail(cause, FP_EUSAGE, "perf: --merge folds the processes of a set together: "
		    "flight_profiler PID --tree, --match REGEX or PID,PID,...");
	o->pid = a.pid;
	o->format = a.format;
	o->rate = a.so.rate;
	o->mode = mode_names[a.so.mode];
	o->file = always_write || command_opt(req, "--filepath") != NULL ? a.file : NULL;
	/* The process first: a pid that is not Python leaves no empty file behind. */
	if ((rc = sampler_open(a.pid, &a.so, &o->s, cause)) != FP_OK)
		return rc;
	/* Checked before sampling: a minute of samples is not lost to a typo. */
	if (o->file != NULL && (fd = perf_open_output(a.file, cause)) < 0)
		return -fd;
	o->prof = profile_new(a.threads);
	rc = perf_sample(&one, perf_sink, o->prof, cause);
	o->summary = sampler_summary(o->s);
	if (o->file == NULL)
		return rc;
	title = xasprintf("flight_profiler perf: process %d, CPython %s, mode %s%s",
	    (int)a.pid, sampler_version(o->s), o->mode, a.so.idle ? " (with idle)" : "");
	rc = perf_write_kept(rc, fd, o->prof, a.format, a.file, title, o->summary, cause);
	free(title);
	return rc;
}

void
perf_one_clear(struct perf_one *o)
{
	free(o->summary);
	profile_free(o->prof);
	if (o->s != NULL)
		sampler_close(o->s);
	memset(o, 0, sizeof *o);
}

int
perf_profile_set(const struct proc_set_spec *spec, const struct cmd_request *req,
    struct perfset_opts *o, char **cause)
{
	struct perf_args a;
	struct sbuf text = { 0 };
	int rc;

	/* parse_args wants a pid; the set is sampled. */
	if ((rc = parse_args(1, req, &a, cause)) != FP_OK)
		return rc;
	o->so = a.so;
	o->threads = a.threads;
	o->merge = command_opt(req, "--merge") != NULL;
	o->format = a.format;
	o->file = command_opt(req, "--filepath") != NULL ? a.file : NULL;
	/* What happened to each member is text; the records say what they can. */
	rc = perfset_run(spec, o, &text, cause);
	sbuf_free(&text);
	return rc;
}

int
perf_cmd_run(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	const struct proc_set_spec *spec = runner_procset(ctx);
	struct perf_args a;
	struct perf_one o;
	int rc;

	if (spec != NULL && command_arg(req, "pid") == NULL) {
		/* parse_args wants a pid; the set is sampled. */
		if ((rc = parse_args(1, req, &a, cause)) != FP_OK)
			return rc;
		return perf_over_set(spec, &a, req, out, cause);
	}
	rc = perf_profile_one(runner_pid(ctx), req, true, &o, cause);
	if (rc == FP_OK) {
		if (sampler_stats(o.s)->exited)
			termsafe_addf(out, "process %d exited while sampled: ", (int)o.pid);
		termsafe_addf(out, "Write %s to %s successfully! %s\n", format_names[o.format],
		    o.file, o.summary);
	}
	perf_one_clear(&o);
	return rc;
}
