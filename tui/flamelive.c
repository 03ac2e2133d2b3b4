#include "config.h"

#include "tui/flamelive.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static struct flamelive_thread *
thread_of(struct flamelive *fl, const struct py_thread *t)
{
	struct flamelive_thread *ft;
	size_t i;

	for (i = 0; i < fl->nthreads; i++)
		if (fl->threads[i].tid == t->tid)
			return &fl->threads[i];
	if (fl->nthreads >= FLAMELIVE_MAX_THREADS)
		return NULL;
	ft = ARRAY_PUSH(fl->threads, fl->nthreads, fl->athreads);
	memset(ft, 0, sizeof *ft);
	ft->tid = t->tid;
	ft->profile = profile_new(false);
	return ft;
}

/* In the sampling thread: one thread of one tick. */
static void
sink(void *arg, const struct sample *smp)
{
	struct flamelive *fl = arg;
	const struct py_thread *t = smp->thread;
	struct flamelive_thread *ft;
	bool held = t->gil == GIL_HELD, active = smp->on_cpu || held;

	pthread_mutex_lock(&fl->mu);
	if (fl->frozen) {
		/* the tick that was under way when z came: a frozen view stays */
		pthread_mutex_unlock(&fl->mu);
		return;
	}
	if ((ft = thread_of(fl, t)) != NULL) {
		if (t->name != NULL && (ft->name == NULL || strcmp(ft->name, t->name) != 0)) {
			free(ft->name);
			ft->name = xstrdup(t->name);
		}
		ft->samples++;
		ft->gil_held += held;
		ft->gil_wait += t->gil == GIL_WAITING;
		ft->on_cpu += smp->on_cpu;
		ft->idle += !active;
	}
	/* idle threads are counted above, drawn only when asked (like perf --idle) */
	if (fl->mode == SAMPLER_CPU ? smp->on_cpu : fl->mode == SAMPLER_GIL ? held :
	    active || fl->idle) {
		profile_add(fl->all, smp);
		if (ft != NULL)
			profile_add(ft->profile, smp);
		fl->generation++;
	}
	fl->stats = *sampler_stats(fl->s);
	pthread_mutex_unlock(&fl->mu);
}

static void *
run(void *arg)
{
	struct flamelive *fl = arg;
	char *cause = NULL;
	int rc;

	for (;;) {
		rc = sampler_run(fl->s, sink, fl, &fl->stop, &cause);
		pthread_mutex_lock(&fl->mu);
		fl->run_ns += (fl->frozen ? fl->frozen_ns : now_ns()) - fl->run_start_ns;
		fl->run_start_ns = 0;
		/* frozen: the numbers as they were when z came */
		if (!fl->frozen || rc != FP_OK || sampler_stats(fl->s)->exited)
			fl->stats = *sampler_stats(fl->s);
		if (rc != FP_OK || fl->stats.exited) {
			fl->ended = true;
			fl->error = cause;
			cause = NULL;
		}
		while (fl->frozen && !fl->closing && !fl->ended)
			pthread_cond_wait(&fl->cv, &fl->mu);
		if (fl->closing || fl->ended) {
			pthread_mutex_unlock(&fl->mu);
			break;
		}
		fl->stop = 0;
		fl->run_start_ns = now_ns();
		pthread_mutex_unlock(&fl->mu);
	}
	free(cause);
	return NULL;
}

int
flamelive_start(pid_t pid, unsigned rate, struct flamelive **flp, char **cause)
{
	struct sampler_opts so = { .rate = rate, .mode = SAMPLER_WALL, .idle = true, .state = true };
	struct flamelive *fl = xcalloc(1, sizeof *fl);
	int rc;

	if ((rc = sampler_open(pid, &so, &fl->s, cause)) != FP_OK) {
		free(fl);
		return rc;
	}
	fl->rate = rate;
	fl->all = profile_new(false);
	pthread_mutex_init(&fl->mu, NULL);
	pthread_cond_init(&fl->cv, NULL);
	fl->run_start_ns = now_ns();
	if (pthread_create(&fl->thread, NULL, run, fl) != 0) {
		sampler_close(fl->s);
		profile_free(fl->all);
		pthread_mutex_destroy(&fl->mu);
		pthread_cond_destroy(&fl->cv);
		free(fl);
		return fail(cause, FP_ERR, "cannot start the sampling thread");
	}
	*flp = fl;
	return FP_OK;
}

struct flamelive *
flamelive_fake(struct profile *all, unsigned rate)
{
	struct flamelive *fl = xcalloc(1, sizeof *fl);

	fl->all = all;
	fl->rate = rate;
	fl->fake = true;
	pthread_mutex_init(&fl->mu, NULL);
	pthread_cond_init(&fl->cv, NULL);
	return fl;
}

void
flamelive_stop(struct flamelive *fl)
{
	size_t i;

	if (fl == NULL)
		return;
	pthread_mutex_lock(&fl->mu);
	fl->closing = true;
	fl->stop = 1;
	pthread_cond_signal(&fl->cv);
	pthread_mutex_unlock(&fl->mu);
	if (!fl->fake)
		pthread_join(fl->thread, NULL);
	sampler_close(fl->s);
	profile_free(fl->all);
	for (i = 0; i < fl->nthreads; i++) {
		profile_free(fl->threads[i].profile);
		free(fl->threads[i].name);
	}
	free(fl->threads);
	free(fl->error);
	pthread_mutex_destroy(&fl->mu);
	pthread_cond_destroy(&fl->cv);
	free(fl);
}

void
flamelive_lock(struct flamelive *fl)
{
	pthread_mutex_lock(&fl->mu);
}

void
flamelive_unlock(struct flamelive *fl)
{
	pthread_mutex_unlock(&fl->mu);
}

void
flamelive_freeze(struct flamelive *fl, bool frozen)
{
	if (fl->fake)
		return;
	pthread_mutex_lock(&fl->mu);
	if (frozen && !fl->frozen)
		fl->frozen_ns = now_ns();
	fl->frozen = frozen;
	if (frozen)
		fl->stop = 1;	/* sampler_run returns after its tick */
	pthread_cond_signal(&fl->cv);
	pthread_mutex_unlock(&fl->mu);
}

void
flamelive_mode(struct flamelive *fl, enum sampler_mode mode)
{
	size_t i;

	pthread_mutex_lock(&fl->mu);
	if (fl->mode != mode) {
		fl->mode = mode;
		/* samples of another mode would mix in: the trees start again */
		profile_free(fl->all);
		fl->all = profile_new(false);
		for (i = 0; i < fl->nthreads; i++) {
			profile_free(fl->threads[i].profile);
			fl->threads[i].profile = profile_new(false);
		}
		fl->generation++;
	}
	pthread_mutex_unlock(&fl->mu);
}

struct profile *
flamelive_profile(struct flamelive *fl, pid_t tid)
{
	size_t i;

	if (tid == 0)
		return fl->all;
	for (i = 0; i < fl->nthreads; i++)
		if (fl->threads[i].tid == tid)
			return fl->threads[i].profile;
	return NULL;
}

void
flamelive_rates(const struct flamelive *fl, double *hz, double *errors)
{
	const struct sampler_stats *st = &fl->stats;
	uint64_t end = fl->frozen ? fl->frozen_ns : now_ns();
	uint64_t ns = fl->run_ns + (fl->run_start_ns != 0 && end > fl->run_start_ns ?
	    end - fl->run_start_ns : 0);
	uint64_t reads = st->thread_reads + st->failed;

	*hz = ns > 0 ? (double)st->ticks * 1e9 / (double)ns : 0;
	*errors = reads > 0 ? (double)(st->torn + st->failed) / (double)reads : 0;
}
