/*
 * jsonperf — perf's records (see jsonperf.h), from the profile's call
 * tree (core/profile.h): a node where samples ended (its `self`) is one
 * distinct stack, its path from the root the frames.
 */
#include "config.h"

#include "core/jsonperf.h"

#include <stdlib.h>
#include <string.h>

#include "core/jsonrec.h"
#include "core/perf_cmd.h"
#include "core/perfset.h"
#include "core/profile.h"
#include "core/sampler.h"

static json_t *
perf_frame(const struct profile_frame *fr)
{
	return json_pack("{s:o,s:i,s:o,s:b}", "file", jsonrec_string(fr->file), "line", fr->line,
	    "function", jsonrec_string(fr->name), "native", fr->native);
}

/* The pid in a process root's label ("pid 4101 python3 job.py", "rank 3 (pid 4101)"). */
static json_int_t
label_pid(const char *label)
{
	const char *at = label != NULL ? strstr(label, "pid ") : NULL;

	return at != NULL ? strtol(at + 4, NULL, 10) : 0;
}

/*
 * The stack that ends at node i, root first; thread and process roots
 * apart.  pid 0: over a set, the process root's.
 */
static json_t *
stack_record(const struct profile *p, pid_t pid, uint32_t i)
{
	json_t *rec = jsonrec_new("perf_stack"), *frames = json_array();
	const struct profile_frame *fr;
	json_t *thread = json_null(), *process = json_null();
	uint32_t n;

	for (n = i; n != 0 && n != PROFILE_NONE; n = p->nodes[n].parent) {
		fr = &p->frames[p->nodes[n].frame];
		if (fr->thread) {
			json_decref(thread);
			thread = jsonrec_string(fr->name);
		} else if (fr->process) {
			json_decref(process);
			process = jsonrec_string(fr->name);
			if (pid == 0)
				pid = (pid_t)label_pid(fr->name);
		} else {
			json_array_insert_new(frames, 0, perf_frame(fr));
		}
	}
	json_object_set_new(rec, "pid", pid != 0 ? json_integer(pid) : json_null());
	json_object_set_new(rec, "count", json_integer((json_int_t)p->nodes[i].self));
	json_object_set_new(rec, "thread", thread);
	json_object_set_new(rec, "process", process);
	json_object_set_new(rec, "frames", frames);
	return rec;
}

static void
summary_record(struct sbuf *out, const struct perf_one *o, size_t stacks, uint64_t counted)
{
	const struct sampler_stats *st = sampler_stats(o->s);
	json_t *rec = jsonrec_new("perf");
	double secs = (double)st->elapsed_ns / 1e9;

	json_object_set_new(rec, "pid", json_integer(o->pid));
	json_object_set_new(rec, "python", json_string(sampler_version(o->s)));
	json_object_set_new(rec, "mode", json_string(o->mode));
	json_object_set_new(rec, "samples", json_integer((json_int_t)counted));
	json_object_set_new(rec, "stacks", json_integer((json_int_t)stacks));
	json_object_set_new(rec, "duration_s", json_real(secs));
	json_object_set_new(rec, "rate", json_integer(o->rate));
	json_object_set_new(rec, "rate_hz", json_real(secs > 0 ? (double)st->ticks / secs : 0));
	json_object_set_new(rec, "ticks", json_integer((json_int_t)st->ticks));
	json_object_set_new(rec, "torn", json_integer((json_int_t)st->torn));
	json_object_set_new(rec, "failed", json_integer((json_int_t)st->failed));
	json_object_set_new(rec, "late", json_integer((json_int_t)st->late));
	json_object_set_new(rec, "exited", json_boolean(st->exited));
	json_object_set_new(rec, "file", o->file != NULL ? jsonrec_string(o->file) : json_null());
	json_object_set_new(rec, "summary", jsonrec_string(o->summary));
	jsonrec_emit(out, rec);
}

/* A perf_stack record per node where samples ended; *stacks of them, *counted samples. */
static void
stack_records(struct sbuf *out, const struct profile *p, pid_t pid, size_t *stacks,
    uint64_t *counted)
{
	size_t i;

	for (i = 0; i < p->nnodes; i++) {
		if (p->nodes[i].self == 0)
			continue;
		jsonrec_emit(out, stack_record(p, pid, (uint32_t)i));
		*counted += p->nodes[i].self;
		(*stacks)++;
	}
}

struct over_set {
	struct sbuf *out;
	struct perfset_opts o;
};

/* perfset's hook: the set's profile, sampled; its stacks, then its perf record. */
static void
set_profiled(void *arg, const struct profile *prof, const char *summary, size_t processes)
{
	struct over_set *s = arg;
	json_t *rec = jsonrec_new("perf");
	uint64_t counted = 0;
	size_t stacks = 0;

	stack_records(s->out, prof, 0, &stacks, &counted);
	json_object_set_new(rec, "pid", json_null());
	json_object_set_new(rec, "processes", json_integer((json_int_t)processes));
	json_object_set_new(rec, "merged", json_boolean(s->o.merge));
	json_object_set_new(rec, "mode", json_string(perf_mode_name(s->o.so.mode)));
	json_object_set_new(rec, "samples", json_integer((json_int_t)counted));
	json_object_set_new(rec, "stacks", json_integer((json_int_t)stacks));
	json_object_set_new(rec, "rate", json_integer(s->o.so.rate));
	json_object_set_new(rec, "file", s->o.file != NULL ? jsonrec_string(s->o.file) :
	    json_null());
	json_object_set_new(rec, "summary", jsonrec_string(summary));
	jsonrec_emit(s->out, rec);
}

int
jsonperf_exec(struct runner *r, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct over_set s = { .out = out };
	struct perf_one o;
	uint64_t counted = 0;
	size_t stacks = 0;
	int rc;

	if (runner_procset(r) != NULL && command_arg(req, "pid") == NULL) {
		s.o.profiled = set_profiled;
		s.o.profiled_arg = &s;
		return perf_profile_set(runner_procset(r), req, &s.o, cause);
	}
	if ((rc = perf_profile_one(runner_pid(r), req, false, &o, cause)) == FP_OK) {
		stack_records(out, o.prof, o.pid, &stacks, &counted);
		summary_record(out, &o, stacks, counted);
	}
	perf_one_clear(&o);
	return rc;
}
