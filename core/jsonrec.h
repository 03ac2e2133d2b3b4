/*
 * jsonrec — the records of --json (doc/json.md): one JSON object per
 * line, each with "type" and "version" (this flight_profiler's), so that
 * scripts and --hosts (core/hosts) read them back.  The "stack" record of
 * a process is made here and parsed back here, so the two cannot drift.
 * Text from the target goes out as JSON strings (bytes that are not UTF-8
 * as \xNN), never raw.
 */
#ifndef FP_JSONREC_H
#define FP_JSONREC_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "core/pystack.h"
#include "core/source.h"
#include "core/util.h"

/* {"type": type, "version": PACKAGE_VERSION}: add the rest, then jsonrec_emit. */
json_t *jsonrec_new(const char *type);
/* rec (stolen) as one line of out. */
void jsonrec_emit(struct sbuf *out, json_t *rec);
/* s as a JSON string (NULL: null); bytes that are not UTF-8 become "\xNN". */
json_t *jsonrec_string(const char *s);

/*
 * {"file", "line", "function", "code"}: code is the source line from sc,
 * else `code` (a remote host's), else null.
 */
json_t *jsonrec_frame(const struct py_frame *f, struct source_cache *sc, const char *code);
/* The "stack" record of one process read from outside. */
json_t *jsonrec_stack(pid_t pid, const char *cmdline, const struct py_snapshot *snap,
    struct source_cache *sc);
/* The "skipped" record of a member of a set that was not read. */
json_t *jsonrec_skipped(pid_t pid, const char *cmdline, const char *reason);

/* A "stack" record parsed back: threads as core/pystack has them. */
struct jsonrec_process {
	pid_t pid;
	char *cmdline;		/* or NULL */
	long rank;		/* "rank", or -1 */
	struct py_thread *threads;
	size_t nthreads;
	char ***code;		/* [thread][frame]: the source line, or NULL */
};
/* FP_ERR with *cause when rec is not a well-formed "stack" record. */
int jsonrec_parse_stack(const json_t *rec, struct jsonrec_process *p, char **cause);
void jsonrec_process_clear(struct jsonrec_process *p);

#endif
