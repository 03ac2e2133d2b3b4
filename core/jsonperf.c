/*
 * jsonperf — perf's records (see jsonperf.h), from the profile's call
 * tree (core/profile.h): a node where samples ended (its `self`) is one
 * distinct stack, its path from the root the frames.
 */
#include "config.h"

#include "core/jsonperf.h"

#include <stdlib.h>

#include "core/jsonrec.h"
#include "core/perf_cmd.h"
#include "core/profile.h"
#include "core/sampler.h"

static json_t *
perf_frame(const struct profile_frame *fr)
{
	return json_pack("{s:o,s:i,s:o,s:b}", "file", jsonrec_string(fr->file), "line", fr->line,
	    "function", jsonrec_string(fr->name), "native", fr->native);
}

/* The stack that ends at node i, root first; thread and process roots apart. */
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
		} else {
			json_array_insert_new(frames, 0, perf_frame(fr));
		}
	}
	json_object_set_new(rec, "pid", json_integer(pid));
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

int
jsonperf_exec(struct runner *r, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	struct perf_one o;
	uint64_t counted = 0;
	size_t i, stacks = 0;
	int rc;

	if (runner_procset(r) != NULL && command_arg(req, "pid") == NULL)
		return fail(cause, FP_EUSAGE, "perf --json: no records over a set yet; "
		    "perf PID --json samples one of its members");
	if ((rc = perf_profile_one(runner_pid(r), req, false, &o, cause)) == FP_OK) {
		for (i = 0; i < o.prof->nnodes; i++) {
			if (o.prof->nodes[i].self == 0)
				continue;
			jsonrec_emit(out, stack_record(o.prof, o.pid, (uint32_t)i));
			counted += o.prof->nodes[i].self;
			stacks++;
		}
		summary_record(out, &o, stacks, counted);
	}
	perf_one_clear(&o);
	return rc;
}
