/*
 * model — what the agent answers, as C structs: the value trees of
 * getglobal/vmtool, the `threads` answer (names, frame locals, asyncio
 * tasks) and what a statement (execute, console) writes and how it ends.
 * They are parsed from the protocol's JSON here and nowhere else
 * (doc/protocol.md); the plain-text renderers (core/render_agent) and the
 * TUI's panes read the models, never json_t.
 *
 * Parsing never fails on a bad field: the agent is trusted to be ours but
 * not to be bug-free, so a missing or mistyped field becomes its empty
 * value ("" for text, 0 for numbers, no children), and a node that is not
 * a node becomes the leaf "?".  Text is kept as the target wrote it:
 * escaping belongs to the sinks (core/termsafe, the TUI's draw).
 *
 * Every *_parse returns a new model the caller frees with its *_free.
 */
#ifndef FP_MODEL_H
#define FP_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/protocol.h"
#include "core/session.h"

/* For the parsers (core/model_*.c): a field's text, "" or NULL when absent. */
char *model_text(json_t *o, const char *key);
char *model_text_or_null(json_t *o, const char *key);
/* A field's integer; dflt when absent or not an integer. */
long long model_int(json_t *o, const char *key, long long dflt);
/* The strings of a JSON array (others skipped), NULL-terminated; *n: how many. */
char **model_strings(json_t *array, size_t *n);

/*
 * The flat fields of an answer, read by a table: each key into the member
 * at offset, by kind; absent or mistyped, the kind's empty value.
 */
enum model_kind {
	MODEL_TEXT,		/* char *: "" when absent */
	MODEL_TEXT_OR_NULL,	/* char *: NULL when absent */
	MODEL_INT,		/* long long: an integer, else 0 */
	MODEL_COUNT,		/* long long: an integer above 0, else 0 */
	MODEL_NUM,		/* double: a number, else 0.0 */
	MODEL_BOOL,		/* bool: JSON true */
};

struct model_field {
	const char *key;
	enum model_kind kind;
	size_t offset;
};

#define MODEL_FIELD(type, member, kind) { #member, (kind), offsetof(type, member) }
#define MODEL_FIELD_AS(type, member, key, kind) { (key), (kind), offsetof(type, member) }
#define MODEL_NFIELDS(table) (sizeof (table) / sizeof (table)[0])

void model_fields_read(json_t *o, const struct model_field *fields, size_t n, void *out);

/* ---- value trees (doc/protocol.md "Values") -------------------------------- */

enum value_kind {
	VALUE_LEAF,		/* a repr */
	VALUE_SEQ,		/* list, tuple, set...: items */
	VALUE_MAP,		/* dict: items with a key */
	VALUE_OBJECT,		/* an instance: attributes by name */
};

struct value_item {
	char *name;			/* VALUE_OBJECT: the attribute; else NULL */
	struct value_tree *key;		/* VALUE_MAP: the key; else NULL */
	struct value_tree *value;
};

struct value_tree {
	enum value_kind kind;
	char *repr;		/* VALUE_LEAF: may span lines */
	bool repr_failed;	/* VALUE_LEAF: repr() raised (repr says how) */
	bool recursive;		/* VALUE_LEAF: already on the path */
	char *type_name;	/* containers and objects: the type */
	char *addr;		/* VALUE_OBJECT: its address, "0x..." */
	char *open, *close;	/* VALUE_SEQ, VALUE_MAP: the brackets */
	long long n;		/* length in the target (-1: not said) */
	long long more;		/* items or attributes not sent */
	struct value_item *items;
	size_t nitems;
};

/* A getglobal or vmtool getInstances answer. */
struct value_block {
	char *expr;		/* the text shown as EXPR */
	char *type_name;
	bool has_count;		/* vmtool: count and shown are set */
	long long count, shown;
	struct value_tree *value;
	bool truncated;		/* the agent's size budget ran out */
};

struct value_tree *value_tree_parse(json_t *node);
void value_tree_free(struct value_tree *v);
struct value_block *value_block_parse(json_t *data);
void value_block_free(struct value_block *b);

/* ---- the `threads` answer ----------------------------------------------------- */

struct thread_name {
	uint64_t ident;		/* threading.get_ident() */
	char *name;
	bool daemon;
	long long native_id;	/* 0: not said */
};

struct local_var {
	char *name;
	char *repr;		/* bounded by the agent; may span lines */
};

/* The locals of one frame, or why there are none. */
struct frame_locals {
	char *note;		/* set: no locals, and why */
	struct local_var *vars;
	size_t nvars;
	long long more;		/* locals not sent */
};

struct agent_frame {
	char *file, *func;
	int line;
	struct frame_locals locals;
};

struct agent_stack {
	uint64_t ident;
	struct agent_frame *frames;	/* innermost first */
	size_t nframes;
};

struct async_task {
	char *name, *coro, *state;
	char *awaiting;		/* NULL: awaits nothing said */
	bool current;		/* running now */
	struct agent_frame *frames;	/* innermost first; no locals */
	size_t nframes;
};

struct async_loop {
	uint64_t ident;		/* the thread running it */
	char *error;		/* NULL, or why its tasks could not be read */
	struct async_task *tasks;
	size_t ntasks;
};

struct agent_threads {
	struct thread_name *names;
	size_t nnames;
	bool has_names;		/* the answer carried names (perhaps none) */
	struct agent_stack *stacks;
	size_t nstacks;
	char *asyncio_note;	/* NULL, or why there are no loops */
	struct async_loop *loops;
	size_t nloops;
};

struct agent_threads *agent_threads_parse(json_t *data);
/* The model of a `threads` request's end (ok or not: then it is empty). */
struct agent_threads *agent_threads_from_end(const struct proto_msg *end);
void agent_threads_free(struct agent_threads *m);

/*
 * The request's args: names always, locals and asyncio tasks when asked,
 * at most `limit` frames per stack.  agent_threads_send() sends it.
 */
json_t *agent_threads_args(bool locals, bool asyncio, long long limit);
int agent_threads_send(struct session *s, bool locals, bool asyncio, long long limit,
    uint64_t *id, char **cause);

/* The stack of thread `ident` in the answer, or NULL: the agent did not see it. */
const struct agent_stack *agent_threads_stack(const struct agent_threads *m, uint64_t ident);

/*
 * The agent's frame that is frame `index` (0 = innermost) of a stack of
 * `nframes` read from outside, when it is still the same function in the
 * same file, or NULL.  Stacks are aligned from the outer end: the thread
 * may have called further since, its outer frames stay.
 */
const struct agent_frame *agent_threads_frame(const struct agent_threads *m, uint64_t ident,
    size_t nframes, size_t index, const char *file, const char *func);

/* ---- statements: execute, console ------------------------------------------ */

/* What a statement wrote to sys.stdout/sys.stderr: one event's "out". */
struct output_chunk {
	char *text;		/* may hold NULs; NUL-terminated after len */
	size_t len;
};

/* An event's chunk; false (and *c empty) when it carries no "out". */
bool output_chunk_parse(json_t *data, struct output_chunk *c);
bool output_chunk_from_msg(const struct proto_msg *ev, struct output_chunk *c);
void output_chunk_clear(struct output_chunk *c);

/* How a statement ended, from its end's data. */
struct statement_end {
	bool incomplete;	/* console: send more lines */
	char *exc;		/* failed: the exception's type, or NULL */
	char *message;		/* failed: "Type: text", or NULL */
	char *traceback;	/* failed: the traceback, or NULL */
};

void statement_end_parse(json_t *data, struct statement_end *e);
void statement_end_from_msg(const struct proto_msg *end, struct statement_end *e);
void statement_end_clear(struct statement_end *e);

/*
 * `s` as a Python str literal (JSON's string syntax is a subset of
 * Python's), to put a word into code sent to the target; NULL when s is
 * not valid UTF-8.  Malloc'd.
 */
char *statement_str_literal(const char *s);

/*
 * Send `code` to run as `cmd` ("execute": a fresh namespace; "console":
 * the connection's), its frames named `filename`.  An enum fp_status.
 */
int statement_send(struct session *s, const char *cmd, const char *code,
    const char *filename, uint64_t *id, char **cause);

/* ---- mem summary / mem diff (doc/protocol.md "mem") ------------------------- */

struct mem_scan_info {
	long long objects, bytes;	/* counted, and their sys.getsizeof total */
	long long untracked;		/* of objects: found as containers' referents */
	long long types;
	bool approximate;		/* the heap changed between the scan's slices */
	bool cut_short;			/* the scan gave up after 30 s: not every object seen */
	bool python_sizeof;		/* some type's __sizeof__ is Python: basic size used */
	long long slices;
	double max_hold_ms, wall_ms;	/* longest GIL hold, the whole scan */
};

struct mem_row {
	char *type;			/* "module.Qualname", as the target names it */
	long long count, size;		/* diff: in the second snapshot */
	long long count_delta, size_delta;	/* diff only */
};

struct mem_table {
	bool diff;
	double interval;		/* diff: seconds between the snapshots */
	struct mem_scan_info scan;	/* diff: the second one */
	struct mem_scan_info before;	/* diff: the first one */
	long long total_types;		/* rows before --limit */
	struct mem_row *rows;
	size_t nrows;
};

struct mem_table *mem_table_parse(json_t *data);
void mem_table_free(struct mem_table *t);

/* ---- mem sites (tracemalloc) and mem rss ----------------------------------- */

struct mem_frame {
	char *file;
	long long line;
};

struct mem_site {
	struct mem_frame where;		/* the newest frame: file:line */
	long long size, size_delta, count, count_delta;
	struct mem_frame *tb;		/* with -f N > 1: newest first; else none */
	size_t ntb;
};

struct mem_sites {
	char *what;			/* "start", "diff", "stop" */
	bool was_tracing;		/* start: the program traced already (left as it was) */
	bool ours;			/* diff: we started tracemalloc */
	bool stopped;			/* stop: we stopped it (else it was the program's) */
	bool shared;			/* start: another client of ours runs it already */
	long long others;		/* stop: clients of ours still using it */
	bool one_shot;			/* diff -i: started and stopped around it */
	long long frames, total_sites;
	struct mem_site *rows;
	size_t nrows;
};

struct mem_sites *mem_sites_parse(json_t *data);
void mem_sites_free(struct mem_sites *m);

struct mem_rss {
	long long rss, hwm;		/* bytes; -1 unknown */
	bool pymalloc;			/* the allocator's figures below are there */
	long long arenas, arena_bytes, used_bytes, free_bytes;
};

void mem_rss_parse(json_t *data, struct mem_rss *m);

/* ---- watch records ------------------------------------------------------------ */

/* One EXPR / VALUE row of a watch record: a value, or the error of its expression. */
struct watch_value {
	char *expr;
	char *type_name;		/* NULL with error */
	struct value_tree *value;	/* NULL with error */
	char *error;			/* the expression raised: how; else NULL */
	bool truncated;
};

struct watch_frame {
	char *file, *func;
	long long line;
};

/* One event of a watch request: the start (started) or one observed call. */
struct watch_record {
	bool started;		/* the hooks are in: matched / observed are set */
	long long matched;	/* methods that matched (-E may match more than it observes) */
	char **observed;	/* "module.Class.method" of each observed method */
	size_t nobserved;
	long long index;	/* 1, 2, ... */
	char *method;
	char *thread;		/* the calling thread's Python name; NULL when not sent */
	double time;		/* wall clock of the call, seconds since the epoch */
	bool has_cost;		/* false at entry (-b) */
	double cost_ms;
	char *exception;	/* "Type: message" when the call raised; else NULL */
	long long dropped;	/* records lost so far to a full queue (-1: not said) */
	struct watch_frame *stack;	/* innermost caller first; NULL without --stack */
	size_t nstack;
	struct watch_value *values;
	size_t nvalues;
};

void watch_record_parse(json_t *data, struct watch_record *w);
void watch_record_clear(struct watch_record *w);

/* ---- tt: the time tunnel's records (core/model_tt.c) --------------------------- */

/* The agent's store: what it holds and its bounds. */
struct tt_store_info {
	long long records, bytes, max_records, max_bytes, evicted;
};

/* One recorded call, as -l, -s and the recording list it. */
struct tt_row {
	long long index;
	char *method;
	double time;		/* wall clock of the call, seconds since the epoch */
	double cost_ms;
	char *thread;		/* its Python name ("?" when gone) */
	char *exception;	/* "Type: message" when it raised; else NULL */
	long long replay_of;	/* the record replayed; 0 for a recorded call */
	long long size;		/* bytes it keeps alive (estimated) */
};

/*
 * One event of a tt request: the recording started, a call was recorded
 * (or a replay made, or a record inspected: `call` has its values), or the
 * filter raised on a call (filter_error).
 */
struct tt_event {
	bool started, has_row, has_store;
	char *filter_error;		/* with call.method and call.time */
	struct watch_record call;	/* started: matched/observed; else the call and values */
	struct tt_row row;
	struct tt_store_info store;
	long long evicted, evicted_first, evicted_last;	/* evicted 0: none now */
	long long dropped;		/* -1: not said */
	bool mutated;			/* the arguments changed since recording */
	long long replay;		/* the replay's number (1..K); 0: not a replay */
};

/* The answer of tt -l or tt -s: rows, and -s's expression errors. */
struct tt_list {
	struct tt_row *rows;
	size_t nrows;
	long long matched;		/* rows that matched (more than nrows when cut) */
	struct tt_store_info store;
	bool searched;
	long long *error_index;
	char **errors;
	size_t nerrors;
	long long error_count;		/* records the expression raised on */
};

void tt_event_parse(json_t *data, struct tt_event *e);
void tt_event_clear(struct tt_event *e);
void tt_list_parse(json_t *data, struct tt_list *l);
void tt_list_clear(struct tt_list *l);
void tt_store_parse(json_t *data, struct tt_store_info *s);

#endif
