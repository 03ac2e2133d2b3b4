#include "config.h"

#include "core/debugoffsets.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define MAX_STRUCT_SIZE	(1ull << 24)	/* no CPython structure is near 16 MiB */
#define MAX_SCRIPT_PATH	4096		/* 3.14 publishes 512 */

/* Validation of one image: the first problem found is the one reported. */
struct dbg_check {
	const char *version;
	char **cause;
	bool bad;
};

static void
dbg_bad(struct dbg_check *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
dbg_bad(struct dbg_check *k, const char *fmt, ...)
{
	va_list ap;
	char *what;

	if (k->bad)
		return;
	k->bad = true;
	va_start(ap, fmt);
	what = xvasprintf(fmt, ap);
	va_end(ap);
	fail(k->cause, FP_EVERSION, "the _Py_DebugOffsets of CPython %s do not validate: %s "
	    "(a corrupt or unknown build; FP_OFFSETS=headers reads it with this build's own tables "
	    "where it has them)", k->version, what);
	free(what);
}

/* A structure's size: non-zero and sane. */
static int64_t
dbg_size(struct dbg_check *k, const char *section, uint64_t size)
{
	if (size == 0 || size > MAX_STRUCT_SIZE)
		dbg_bad(k, "%s.size = %llu", section, (unsigned long long)size);
	return (int64_t)size;
}

/*
 * A field of `width` bytes at `off`: inside its structure of `size` bytes,
 * aligned to its width, and (span != 0) inside what a reader copies.
 */
static int64_t
dbg_field(struct dbg_check *k, const char *section, const char *field, int64_t size,
    uint64_t off, unsigned width, uint64_t span)
{
	if (k->bad)
		return PYOFF_NONE;
	if (size <= 0 || off >= (uint64_t)size || width > (uint64_t)size - off ||
	    (off & (width - 1)) != 0) {
		dbg_bad(k, "%s.%s = %llu is not a %u-byte field inside its %lld-byte structure",
		    section, field, (unsigned long long)off, width, (long long)size);
		return PYOFF_NONE;
	}
	if (span != 0 && off + width > span) {
		dbg_bad(k, "%s.%s = %llu is beyond the first %llu bytes this build reads",
		    section, field, (unsigned long long)off, (unsigned long long)span);
		return PYOFF_NONE;
	}
	return (int64_t)off;
}

/*
 * The fields 3.13, 3.14 and 3.15 share, under the same names: a macro
 * because they sit at different places of different structures.  Each
 * field is checked against the size of its own structure as published.
 */
#define DBG_COMMON(k, d, o) do {							\
	(o)->runtime_size = dbg_size(k, "runtime_state", (d)->runtime_state.size);	\
	(o)->runtime_finalizing = dbg_field(k, "runtime_state", "finalizing",		\
	    (o)->runtime_size, (d)->runtime_state.finalizing, 8, 0);			\
	(o)->runtime_interp_head = dbg_field(k, "runtime_state", "interpreters_head",	\
	    (o)->runtime_size, (d)->runtime_state.interpreters_head, 8, 0);		\
	(o)->interp_size = dbg_size(k, "interpreter_state", (d)->interpreter_state.size);	\
	(o)->interp_next = dbg_field(k, "interpreter_state", "next", (o)->interp_size,	\
	    (d)->interpreter_state.next, 8, 0);						\
	(o)->interp_tstate_head = dbg_field(k, "interpreter_state", "threads_head",	\
	    (o)->interp_size, (d)->interpreter_state.threads_head, 8, 0);		\
	(o)->interp_gil_ptr = dbg_field(k, "interpreter_state", "ceval_gil",		\
	    (o)->interp_size, (d)->interpreter_state.ceval_gil, 8, 0);			\
	(o)->interp_modules = dbg_field(k, "interpreter_state", "imports_modules",	\
	    (o)->interp_size, (d)->interpreter_state.imports_modules, 8, 0);		\
	dbg_gil(k, (o), (d)->interpreter_state.gil_runtime_state,			\
	    (d)->interpreter_state.gil_runtime_state_locked,				\
	    (d)->interpreter_state.gil_runtime_state_holder);				\
	(o)->tstate_size = dbg_size(k, "thread_state", (d)->thread_state.size);		\
	(o)->tstate_prev = dbg_field(k, "thread_state", "prev", (o)->tstate_size,	\
	    (d)->thread_state.prev, 8, PYOFF_TSTATE_SPAN);				\
	(o)->tstate_next = dbg_field(k, "thread_state", "next", (o)->tstate_size,	\
	    (d)->thread_state.next, 8, PYOFF_TSTATE_SPAN);				\
	(o)->tstate_interp = dbg_field(k, "thread_state", "interp", (o)->tstate_size,	\
	    (d)->thread_state.interp, 8, PYOFF_TSTATE_SPAN);				\
	(o)->tstate_frame = dbg_field(k, "thread_state", "current_frame",		\
	    (o)->tstate_size, (d)->thread_state.current_frame, 8, PYOFF_TSTATE_SPAN);	\
	(o)->tstate_thread_id = dbg_field(k, "thread_state", "thread_id",		\
	    (o)->tstate_size, (d)->thread_state.thread_id, 8, PYOFF_TSTATE_SPAN);	\
	(o)->tstate_native_thread_id = dbg_field(k, "thread_state", "native_thread_id",	\
	    (o)->tstate_size, (d)->thread_state.native_thread_id, 8, PYOFF_TSTATE_SPAN);	\
	(o)->tstate_datastack_chunk = dbg_field(k, "thread_state", "datastack_chunk",	\
	    (o)->tstate_size, (d)->thread_state.datastack_chunk, 8, PYOFF_TSTATE_SPAN);	\
	(o)->frame_size = dbg_size(k, "interpreter_frame", (d)->interpreter_frame.size);	\
	(o)->frame_back = dbg_field(k, "interpreter_frame", "previous", (o)->frame_size,	\
	    (d)->interpreter_frame.previous, 8, PYOFF_FRAME_SPAN);			\
	(o)->frame_code = dbg_field(k, "interpreter_frame", "executable",		\
	    (o)->frame_size, (d)->interpreter_frame.executable, 8, PYOFF_FRAME_SPAN);	\
	(o)->frame_lasti = dbg_field(k, "interpreter_frame", "instr_ptr",		\
	    (o)->frame_size, (d)->interpreter_frame.instr_ptr, 8, PYOFF_FRAME_SPAN);	\
	(o)->frame_owner = dbg_field(k, "interpreter_frame", "owner", (o)->frame_size,	\
	    (d)->interpreter_frame.owner, 1, PYOFF_FRAME_SPAN);				\
	(o)->code_size = dbg_size(k, "code_object", (d)->code_object.size);		\
	(o)->code_filename = dbg_field(k, "code_object", "filename", (o)->code_size,	\
	    (d)->code_object.filename, 8, PYOFF_CODE_SPAN);				\
	(o)->code_name = dbg_field(k, "code_object", "name", (o)->code_size,		\
	    (d)->code_object.name, 8, PYOFF_CODE_SPAN);					\
	(o)->code_qualname = dbg_field(k, "code_object", "qualname", (o)->code_size,	\
	    (d)->code_object.qualname, 8, PYOFF_CODE_SPAN);				\
	(o)->code_linetable = dbg_field(k, "code_object", "linetable", (o)->code_size,	\
	    (d)->code_object.linetable, 8, PYOFF_CODE_SPAN);				\
	(o)->code_firstlineno = dbg_field(k, "code_object", "firstlineno",		\
	    (o)->code_size, (d)->code_object.firstlineno, 4, PYOFF_CODE_SPAN);		\
	(o)->code_code_adaptive = dbg_field(k, "code_object", "co_code_adaptive",	\
	    (o)->code_size, (d)->code_object.co_code_adaptive, 1, 0);			\
	(o)->object_type = dbg_field(k, "pyobject", "ob_type",				\
	    dbg_size(k, "pyobject", (d)->pyobject.size), (d)->pyobject.ob_type, 8, 0);	\
	(o)->type_name = dbg_field(k, "type_object", "tp_name",				\
	    dbg_size(k, "type_object", (d)->type_object.size), (d)->type_object.tp_name, 8, 0);	\
	(o)->bytes_size = dbg_field(k, "bytes_object", "ob_size",			\
	    dbg_size(k, "bytes_object", (d)->bytes_object.size), (d)->bytes_object.ob_size, 8, 0);	\
	(o)->bytes_sval = dbg_field(k, "bytes_object", "ob_sval",			\
	    (int64_t)(d)->bytes_object.size, (d)->bytes_object.ob_sval, 1, 0);		\
	dbg_unicode(k, (o), (d)->unicode_object.size, (d)->unicode_object.state,	\
	    (d)->unicode_object.length, (d)->unicode_object.asciiobject_size);		\
} while (0)

/* The GIL: published relative to the interpreter, read relative to the GIL. */
static void
dbg_gil(struct dbg_check *k, struct py_offsets *o, uint64_t gil, uint64_t locked,
    uint64_t holder)
{
	if (dbg_field(k, "interpreter_state", "gil_runtime_state", o->interp_size, gil, 8, 0) ==
	    PYOFF_NONE ||
	    dbg_field(k, "interpreter_state", "gil_runtime_state_locked", o->interp_size,
		locked, 4, 0) == PYOFF_NONE ||
	    dbg_field(k, "interpreter_state", "gil_runtime_state_holder", o->interp_size,
		holder, 8, 0) == PYOFF_NONE)
		return;
	if (locked < gil || holder < gil) {
		dbg_bad(k, "the GIL's fields (locked %llu, holder %llu) lie before the GIL (%llu)",
		    (unsigned long long)locked, (unsigned long long)holder, (unsigned long long)gil);
		return;
	}
	o->gil_locked = (int64_t)(locked - gil);
	o->gil_last_holder = (int64_t)(holder - gil);
}

static void
dbg_unicode(struct dbg_check *k, struct py_offsets *o, uint64_t size, uint64_t state,
    uint64_t length, uint64_t ascii_size)
{
	int64_t sz = dbg_size(k, "unicode_object", size);

	o->unicode_state = dbg_field(k, "unicode_object", "state", sz, state, 4,
	    PYOFF_UNICODE_SPAN);
	o->unicode_length = dbg_field(k, "unicode_object", "length", sz, length, 8,
	    PYOFF_UNICODE_SPAN);
	if (!k->bad && (ascii_size == 0 || ascii_size > size || ascii_size > PYOFF_UNICODE_SPAN))
		dbg_bad(k, "unicode_object.asciiobject_size = %llu", (unsigned long long)ascii_size);
	o->unicode_ascii_size = (int64_t)ascii_size;
}

/*
 * PEP 768 (3.14, unchanged in 3.15): where a debugger writes its request.
 * A section that is zero or does not validate leaves remote_debug false
 * (reading stacks does not need it); remote_exec.c then says PEP 768 is
 * unavailable.
 */
static void
dbg_debugger(struct py_offsets *o, uint64_t threads_main, const struct dbg_debugger_support *d)
{
	struct dbg_check k = { .version = "", .cause = NULL, .bad = false };
	uint64_t rds = d->remote_debugger_support;
	uint64_t path = d->debugger_script_path;
	uint64_t psize = d->debugger_script_path_size;

	o->remote_debug = false;
	o->interp_threads_main = PYOFF_NONE;
	o->interp_remote_debug_enabled = PYOFF_NONE;
	o->tstate_eval_breaker = PYOFF_NONE;
	o->tstate_remote_debugger_support = PYOFF_NONE;
	o->debugger_pending_call = PYOFF_NONE;
	o->debugger_script_path = PYOFF_NONE;
	o->debugger_script_path_size = 0;
	if (rds == 0 || psize < 2 || psize > MAX_SCRIPT_PATH || rds >= (uint64_t)o->tstate_size)
		return;
	o->interp_threads_main = dbg_field(&k, "interpreter_state", "threads_main",
	    o->interp_size, threads_main, 8, 0);
	o->interp_remote_debug_enabled = dbg_field(&k, "debugger_support",
	    "remote_debugging_enabled", o->interp_size, d->remote_debugging_enabled, 4, 0);
	o->tstate_eval_breaker = dbg_field(&k, "debugger_support", "eval_breaker",
	    o->tstate_size, d->eval_breaker, 8, 0);
	/* The two inner offsets, relative to the thread state. */
	dbg_field(&k, "debugger_support", "debugger_pending_call", o->tstate_size,
	    rds + d->debugger_pending_call, 4, 0);
	if (path > (uint64_t)o->tstate_size || rds + path > (uint64_t)o->tstate_size ||
	    psize > (uint64_t)o->tstate_size - rds - path)
		k.bad = true;
	if (k.bad)
		return;
	o->tstate_remote_debugger_support = (int64_t)rds;
	o->debugger_pending_call = (int64_t)d->debugger_pending_call;
	o->debugger_script_path = (int64_t)path;
	o->debugger_script_path_size = (int64_t)psize;
	o->remote_debug = true;
}

int
debug_offsets_refuse_newer(char **cause, const char *prefix, const char *version)
{
	return fail(cause, FP_EVERSION, "%sCPython %s is newer than this flight_profiler knows "
	    "(CPython 3.8 to 3.%u): upgrade flight_profiler", prefix, version,
	    DEBUG_OFFSETS_NEWEST_MINOR);
}

/*
 * 3.14 and 3.15 moved fields during their alphas and betas; only the
 * release candidates' and releases' layout is described.
 */
static int
refuse_prerelease(char **cause, uint64_t hex, const char *version)
{
	unsigned minor = (unsigned)(hex >> 16) & 0xff;

	return fail(cause, FP_EVERSION, "it runs a pre-release CPython %s (0x%08llx): the "
	    "_Py_DebugOffsets layout changed during 3.%u's alphas and betas and only 3.%u's "
	    "final layout is described; use 3.%u.0rc1 or later", version,
	    (unsigned long long)hex, minor, minor, minor);
}

static int
too_short(char **cause, size_t len, unsigned minor)
{
	return fail(cause, FP_EVERSION, "_Py_DebugOffsets: %zu bytes is too short for 3.%u's",
	    len, minor);
}

/*
 * What 3.14 and 3.15 do not publish, from their headers (the same in
 * both): f_executable is a _PyStackRef whose low Py_TAG_BITS (3, with the
 * GIL: pycore_stackref.h) are tags.  Each C call of the evaluation loop
 * pushes an entry frame owned by FRAME_OWNED_BY_INTERPRETER (3: Python/
 * ceval.c, "entry.frame.owner = FRAME_OWNED_BY_INTERPRETER" in 3.14 and
 * 3.15); 3.15 also roots every thread's chain in a base frame of that
 * owner.  3.14's enum still has FRAME_OWNED_BY_CSTACK = 4
 * (pycore_interpframe_structs.h) though its ceval.c no longer assigns it:
 * skipped as well, like CPython's own `owner >= FRAME_OWNED_BY_INTERPRETER`.
 * 3.15 removed it.
 */
static void
dbg_frames_314(struct py_offsets *o, unsigned minor)
{
	o->frame_owned_by_interpreter = 3;
	o->frame_owned_by_cstack = minor == 14 ? 4 : PYOFF_NONE;
	o->frame_code_tags = 3;
}

static int
parse_313(const void *image, size_t len, const struct py_offsets *hdr, struct py_offsets *o,
    struct dbg_check *k)
{
	struct debug_offsets_313 d;

	if (len < sizeof d)
		return too_short(k->cause, len, 13);
	memcpy(&d, image, sizeof d);
	DBG_COMMON(k, &d, o);
	/* FRAME_OWNED_BY_CSTACK: 3 in 3.12 and 3.13 (pycore_frame.h). */
	o->frame_owned_by_cstack = hdr ? hdr->frame_owned_by_cstack : 3;
	return FP_OK;
}

static int
parse_314(const void *image, size_t len, struct py_offsets *o, struct dbg_check *k)
{
	struct debug_offsets_314 d;

	if (len < sizeof d)
		return too_short(k->cause, len, 14);
	memcpy(&d, image, sizeof d);
	DBG_COMMON(k, &d, o);
	dbg_frames_314(o, 14);
	if (!k->bad)
		dbg_debugger(o, d.interpreter_state.threads_main, &d.debugger_support);
	return FP_OK;
}

/*
 * 3.15 publishes sizeof(PyCompactUnicodeObject), which earlier readers
 * took from the headers or assumed.  Of what else it added, CPython's own
 * reader (Modules/_remote_debugging) ends a sample at base_frame
 * (frames.c: "Incomplete sample: did not reach base frame") and validates,
 * to dereference them (debug_offsets_validation.h), holds_gil and
 * gil_requested (its thread status: THREAD_STATUS_HAS_GIL,
 * _GIL_REQUESTED), current_exception and exc_state (_HAS_EXCEPTION),
 * last_profiled_frame(_seq) (a frame cache the target keeps current for
 * it) and gc.frame (<GC> frames).  Here
 * a chain is whole when it ends on a frame owned by the interpreter, which
 * the base frame is (pyframes_chain_may_end()); the GIL holder is read as
 * on 3.13 and 3.14 (interpreter_state.gil_runtime_state_holder).
 */
static int
parse_315(const void *image, size_t len, struct py_offsets *o, struct dbg_check *k)
{
	struct debug_offsets_315 d;
	uint64_t compact;

	if (len < sizeof d)
		return too_short(k->cause, len, 15);
	memcpy(&d, image, sizeof d);
	DBG_COMMON(k, &d, o);
	dbg_frames_314(o, 15);
	compact = d.unicode_object.compactunicodeobject_size;
	if (!k->bad && (compact <= d.unicode_object.asciiobject_size ||
	    compact > d.unicode_object.size || compact > PYOFF_UNICODE_SPAN))
		dbg_bad(k, "unicode_object.compactunicodeobject_size = %llu",
		    (unsigned long long)compact);
	o->unicode_compact_size = (int64_t)compact;
	if (!k->bad)
		dbg_debugger(o, d.interpreter_state.threads_main, &d.debugger_support);
	return FP_OK;
}

/*
 * What _Py_DebugOffsets does not publish (the GIL's condition variable,
 * the unicode state bits) comes from this minor version's headers when
 * they were configured, else stays unknown (GIL waits are then found from
 * native frames only) or takes the layout every version since 3.3 has had
 * (the kind/compact/ascii bits).
 */
static void
dbg_defaults(struct py_offsets *o, uint32_t hex, const char *version,
    const struct py_offsets *hdr)
{
	o->version_hex = hex;
	o->version = version;
	o->source = "_Py_DebugOffsets";
	o->frame_model = PY_FRAMES_INTERP;
	o->runtime_tstate_current = PYOFF_NONE;
	o->runtime_gil = PYOFF_NONE;
	o->interp_runtime = hdr ? hdr->interp_runtime : PYOFF_NONE;
	o->gil_size = hdr ? hdr->gil_size : 0;
	o->gil_cond = hdr ? hdr->gil_cond : PYOFF_NONE;
	o->gil_mutex = hdr ? hdr->gil_mutex : PYOFF_NONE;
	o->tstate_cframe = PYOFF_NONE;
	o->cframe_current_frame = PYOFF_NONE;
	o->cframe_previous = PYOFF_NONE;
	o->frame_is_entry = PYOFF_NONE;
	/* FRAME_OWNED_BY_GENERATOR is 1 in 3.11-3.15 (pycore_frame.h, pycore_interpframe_structs.h). */
	o->frame_owned_by_generator = hdr ? hdr->frame_owned_by_generator : 1;
	/* Not in _Py_DebugOffsets: from the same minor's headers, else unchecked. */
	o->frame_owned_by_thread = hdr ? hdr->frame_owned_by_thread : PYOFF_NONE;
	o->gen_frame_state = hdr ? hdr->gen_frame_state : PYOFF_NONE;
	o->gen_state_executing = hdr ? hdr->gen_state_executing : PYOFF_NONE;
	o->chunk_previous = hdr ? hdr->chunk_previous : PYOFF_NONE;
	o->chunk_data = hdr ? hdr->chunk_data : PYOFF_NONE;
	o->chunk_size = hdr ? hdr->chunk_size : PYOFF_NONE;
	/* pyframes' check that a callee sits where its caller's frame ends. */
	o->tstate_datastack_top = hdr ? hdr->tstate_datastack_top : PYOFF_NONE;
	o->code_framesize = hdr ? hdr->code_framesize : PYOFF_NONE;
	o->code_nlocalsplus = PYOFF_NONE;	/* 3.11 only */
	o->code_stacksize = PYOFF_NONE;
	/* 3.13's shim frames are told by their code's flags (3.14+: by their owner). */
	o->code_flags = hdr ? hdr->code_flags : PYOFF_NONE;
	o->frame_state = PYOFF_NONE;
	o->frame_state_running = PYOFF_NONE;
	o->frame_state_unwinding = PYOFF_NONE;
	o->unicode_compact_size = 0;	/* 3.15 publishes it; else derived at the end */
	o->unicode_kind_shift = hdr ? hdr->unicode_kind_shift : 2;
	o->unicode_kind_mask = hdr ? hdr->unicode_kind_mask : 7;
	o->unicode_compact_bit = hdr ? hdr->unicode_compact_bit : 1u << 5;
	o->unicode_ascii_bit = hdr ? hdr->unicode_ascii_bit : 1u << 6;
	o->frame_code_tags = 0;
	o->frame_owned_by_interpreter = PYOFF_NONE;
	o->interp_threads_main = PYOFF_NONE;
	o->interp_remote_debug_enabled = PYOFF_NONE;
	o->tstate_eval_breaker = PYOFF_NONE;
	o->tstate_remote_debugger_support = PYOFF_NONE;
	o->debugger_pending_call = PYOFF_NONE;
	o->debugger_script_path = PYOFF_NONE;
}

int
debug_offsets_parse(const void *image, size_t len, uint32_t version_hex,
    const char *version, const struct py_offsets *hdr, struct py_offsets *o, char **cause)
{
	struct debug_offsets_head head;
	struct dbg_check k = { .version = version, .cause = cause, .bad = false };
	unsigned minor;
	int rc;

	memset(o, 0, sizeof *o);
	if (len < sizeof head)
		return fail(cause, FP_EVERSION, "_Py_DebugOffsets: %zu bytes is too short", len);
	memcpy(&head, image, sizeof head);
	if (memcmp(head.cookie, DEBUG_OFFSETS_COOKIE, 8) != 0)
		return fail(cause, FP_EVERSION, "_PyRuntime does not start with the _Py_DebugOffsets "
		    "cookie \"xdebugpy\"");
	if ((head.version >> 24) != 3 || (head.version >> 16) != (version_hex >> 16))
		return fail(cause, FP_EVERSION, "_Py_DebugOffsets is for version 0x%llx, the binary "
		    "says %s", (unsigned long long)head.version, version);
	minor = (unsigned)(head.version >> 16) & 0xff;
	if (minor > DEBUG_OFFSETS_NEWEST_MINOR)
		return debug_offsets_refuse_newer(cause, "", version);
	if (head.free_threaded)
		return fail(cause, FP_EVERSION, "CPython %s free-threaded (3.%ut) is not supported: "
		    "its thread states and frames are read differently; use a default (GIL) build",
		    version, minor);
	if (minor >= 14 && (head.version & 0xf0) < 0xc0)
		return refuse_prerelease(cause, head.version, version);

	dbg_defaults(o, (uint32_t)head.version, version, hdr);
	if (minor == 13)
		rc = parse_313(image, len, hdr, o, &k);
	else if (minor == 14)
		rc = parse_314(image, len, o, &k);
	else if (minor == 15)
		rc = parse_315(image, len, o, &k);
	else
		rc = fail(cause, FP_EVERSION, "it runs CPython %s, whose _Py_DebugOffsets layout is "
		    "not described in this build (known layouts: 3.13, 3.14, 3.15)", version);
	if (rc != FP_OK)
		return rc;
	if (k.bad)
		return FP_EVERSION;
	/* Derived sizes the readers rely on. */
	if (o->unicode_compact_size == 0)
		o->unicode_compact_size = hdr ? hdr->unicode_compact_size : o->unicode_ascii_size + 16;
	if (o->unicode_compact_size > PYOFF_UNICODE_SPAN)
		return fail(cause, FP_EVERSION, "the _Py_DebugOffsets of CPython %s do not validate: "
		    "unicode header of %lld bytes", version, (long long)o->unicode_compact_size);
	return FP_OK;
}
