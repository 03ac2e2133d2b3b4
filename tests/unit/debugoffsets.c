/*
 * debugoffsets unit test: debug_offsets_parse() against
 * synthetic _Py_DebugOffsets images.
 *
 * 3.14 and 3.15 (neither can be run here): images built from struct
 * debug_offsets_314 / _315 with a distinct value in every field, so that a
 * field read from the wrong place shows.  The fields both versions have are
 * filled from one list and checked by one function: 3.15 moved most of them
 * (sections were inserted before them), so the same values at other places
 * are what proves each version is read with its own layout.  3.13: an image
 * whose values are those of the table generated from the 3.13 headers
 * (when 3.13 was configured), so the mapping is checked against the
 * headers, not against itself.  All: a wrong cookie, a free-threaded build,
 * a version of another minor, a version newer than the newest known,
 * pre-releases, out-of-range and misaligned offsets are refused.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/debugoffsets.h"
#include "core/pyoffsets.h"
#include "core/pyruntime.h"
#include "core/pystack_int.h"
#include "core/util.h"
#include "tests/unit/tap.h"

#define V3130	0x030d00f0u
#define V3140	0x030e00f0u	/* 3.14.0 final */
#define V3150	0x030f00f0u	/* 3.15.0 final */

/* ---- 3.14 and 3.15 ---------------------------------------------------------- */

/*
 * Every field 3.14 and 3.15 share by name gets its own value, each a
 * multiple of 8 so that the alignment checks pass, all below the sizes
 * (which are large and distinct).  A macro: the two structures differ.
 */
#define FILL_SHARED(d) do {							\
	memcpy((d)->cookie, "xdebugpy", 8);					\
	(d)->runtime_state.size = 300000;					\
	(d)->runtime_state.finalizing = 608;					\
	(d)->runtime_state.interpreters_head = 632;				\
	(d)->interpreter_state.size = 200000;					\
	(d)->interpreter_state.id = 8;						\
	(d)->interpreter_state.next = 7264;					\
	(d)->interpreter_state.threads_head = 7344;				\
	(d)->interpreter_state.threads_main = 7352;				\
	(d)->interpreter_state.gc = 9000;					\
	(d)->interpreter_state.imports_modules = 7656;				\
	(d)->interpreter_state.sysdict = 7700;					\
	(d)->interpreter_state.builtins = 7708;					\
	(d)->interpreter_state.ceval_gil = 16;					\
	(d)->interpreter_state.gil_runtime_state = 40000;			\
	(d)->interpreter_state.gil_runtime_state_locked = 40000 + 24;		\
	(d)->interpreter_state.gil_runtime_state_holder = 40000 + 8;		\
	(d)->interpreter_state.code_object_generation = 50000;			\
	(d)->thread_state.size = 880;						\
	(d)->thread_state.prev = 0;						\
	(d)->thread_state.next = 8;						\
	(d)->thread_state.interp = 16;						\
	(d)->thread_state.current_frame = 72;					\
	(d)->thread_state.thread_id = 152;					\
	(d)->thread_state.native_thread_id = 160;				\
	(d)->thread_state.datastack_chunk = 232;				\
	(d)->thread_state.status = 40;						\
	(d)->interpreter_frame.size = 88;					\
	(d)->interpreter_frame.previous = 8;					\
	(d)->interpreter_frame.instr_ptr = 56;					\
	(d)->interpreter_frame.localsplus = 80;					\
	(d)->interpreter_frame.owner = 74;					\
	(d)->interpreter_frame.stackpointer = 64;				\
	(d)->code_object.size = 216;						\
	(d)->code_object.filename = 112;					\
	(d)->code_object.name = 120;						\
	(d)->code_object.qualname = 128;					\
	(d)->code_object.linetable = 136;					\
	(d)->code_object.firstlineno = 68;					\
	(d)->code_object.argcount = 52;						\
	(d)->code_object.localsplusnames = 96;					\
	(d)->code_object.localspluskinds = 104;					\
	(d)->code_object.co_code_adaptive = 208;				\
	(d)->pyobject.size = 16;						\
	(d)->pyobject.ob_type = 8;						\
	(d)->type_object.size = 416;						\
	(d)->type_object.tp_name = 24;						\
	(d)->type_object.tp_repr = 88;						\
	(d)->type_object.tp_flags = 168;					\
	(d)->tuple_object = (struct dbg_seq_object){ 32, 24, 16 };		\
	(d)->list_object = (struct dbg_seq_object){ 40, 24, 16 };		\
	(d)->set_object = (struct dbg_set_object){ 200, 24, 40, 48 };		\
	(d)->dict_object = (struct dbg_dict_object){ 48, 32, 40 };		\
	(d)->float_object = (struct dbg_float_object){ 24, 16 };		\
	(d)->long_object = (struct dbg_long_object){ 32, 16, 24 };		\
	(d)->bytes_object = (struct dbg_bytes_object){ 40, 16, 33 };		\
	(d)->unicode_object.size = 72;						\
	(d)->unicode_object.state = 32;						\
	(d)->unicode_object.length = 16;					\
	(d)->unicode_object.asciiobject_size = 40;				\
	(d)->gc.size = 400;							\
	(d)->gc.collecting = 20;						\
	(d)->gen_object = (struct dbg_gen_object){ 160, 24, 80, 67 };		\
	(d)->llist_node = (struct dbg_llist_node){ 0, 8 };			\
	(d)->debugger_support = (struct dbg_debugger_support){ 24, 328, 9104, 0, 4, 512 };	\
} while (0)

static void
image_314(struct debug_offsets_314 *d)
{
	memset(d, 0, sizeof *d);
	d->version = V3140;
	FILL_SHARED(d);
}

/* What 3.15 adds, with values none of the shared fields has. */
static void
image_315(struct debug_offsets_315 *d)
{
	memset(d, 0, sizeof *d);
	d->version = V3150;
	FILL_SHARED(d);
	d->thread_state.base_frame = 80;
	d->thread_state.last_profiled_frame = 88;
	d->thread_state.last_profiled_frame_seq = 96;
	d->thread_state.holds_gil = 800;
	d->thread_state.gil_requested = 804;
	d->thread_state.current_exception = 808;
	d->thread_state.exc_state = 816;
	d->err_stackitem.exc_value = 0;
	d->type_object.tp_basicsize = 32;
	d->type_object.tp_dictoffset = 288;
	d->heap_type_object.size = 920;
	d->heap_type_object.ht_cached_keys = 872;
	d->unicode_object.compactunicodeobject_size = 64;
	d->gc.frame = 48;
	d->gc.generation_stats_size = 96;
	d->gc.generation_stats = 56;
}

static int
parse_named(const void *img, size_t len, uint32_t version_hex, const char *version,
    const struct py_offsets *hdr, struct py_offsets *o, char **cause)
{
	free(*cause);
	*cause = NULL;
	return debug_offsets_parse(img, len, version_hex, version, hdr, o, cause);
}

static int
parse(const void *img, size_t len, uint32_t version_hex, const struct py_offsets *hdr,
    struct py_offsets *o, char **cause)
{
	return parse_named(img, len, version_hex, "3.x", hdr, o, cause);
}

/* What FILL_SHARED put in, as read back through a version's own layout. */
static void
check_shared(const struct py_offsets *o, const char *v)
{
	is_str(o->source, "_Py_DebugOffsets", "%s: source", v);
	is_int(o->frame_model, PY_FRAMES_INTERP, "%s: frame model", v);
	is_int(o->runtime_size, 300000, "%s: runtime_state.size", v);
	is_int(o->runtime_finalizing, 608, "%s: runtime_state.finalizing", v);
	is_int(o->runtime_interp_head, 632, "%s: runtime_state.interpreters_head", v);
	is_int(o->runtime_tstate_current, PYOFF_NONE, "%s: no gilstate.tstate_current", v);
	is_int(o->runtime_gil, PYOFF_NONE, "%s: no runtime GIL", v);
	is_int(o->interp_size, 200000, "%s: interpreter_state.size", v);
	is_int(o->interp_next, 7264, "%s: interpreter_state.next", v);
	is_int(o->interp_tstate_head, 7344, "%s: interpreter_state.threads_head", v);
	is_int(o->interp_threads_main, 7352, "%s: interpreter_state.threads_main", v);
	is_int(o->interp_gil_ptr, 16, "%s: interpreter_state.ceval_gil", v);
	is_int(o->interp_modules, 7656, "%s: interpreter_state.imports_modules", v);
	is_int(o->interp_runtime, PYOFF_NONE, "%s: no interp->runtime without headers", v);
	is_int(o->gil_last_holder, 8, "%s: GIL holder, relative to the GIL", v);
	is_int(o->gil_locked, 24, "%s: GIL locked, relative to the GIL", v);
	is_int(o->gil_cond, PYOFF_NONE, "%s: no GIL cond without headers", v);
	is_int(o->tstate_size, 880, "%s: thread_state.size", v);
	is_int(o->tstate_prev, 0, "%s: thread_state.prev", v);
	is_int(o->tstate_next, 8, "%s: thread_state.next", v);
	is_int(o->tstate_interp, 16, "%s: thread_state.interp", v);
	is_int(o->tstate_frame, 72, "%s: thread_state.current_frame", v);
	is_int(o->tstate_cframe, PYOFF_NONE, "%s: no cframe", v);
	is_int(o->tstate_thread_id, 152, "%s: thread_state.thread_id", v);
	is_int(o->tstate_native_thread_id, 160, "%s: thread_state.native_thread_id", v);
	is_int(o->tstate_datastack_chunk, 232, "%s: thread_state.datastack_chunk", v);
	is_int(o->frame_size, 88, "%s: interpreter_frame.size", v);
	is_int(o->frame_back, 8, "%s: interpreter_frame.previous", v);
	is_int(o->frame_code, 0, "%s: interpreter_frame.executable", v);
	is_int(o->frame_lasti, 56, "%s: interpreter_frame.instr_ptr", v);
	is_int(o->frame_owner, 74, "%s: interpreter_frame.owner", v);
	is_int(o->frame_is_entry, PYOFF_NONE, "%s: no is_entry", v);
	is_int(o->frame_code_tags, 3, "%s: f_executable is a _PyStackRef: Py_TAG_BITS 3", v);
	is_int(o->frame_owned_by_interpreter, 3, "%s: FRAME_OWNED_BY_INTERPRETER = 3", v);
	is_int(o->code_size, 216, "%s: code_object.size", v);
	is_int(o->code_filename, 112, "%s: code_object.filename", v);
	is_int(o->code_name, 120, "%s: code_object.name", v);
	is_int(o->code_qualname, 128, "%s: code_object.qualname", v);
	is_int(o->code_linetable, 136, "%s: code_object.linetable", v);
	is_int(o->code_firstlineno, 68, "%s: code_object.firstlineno", v);
	is_int(o->code_code_adaptive, 208, "%s: code_object.co_code_adaptive", v);
	is_int(o->object_type, 8, "%s: pyobject.ob_type", v);
	is_int(o->type_name, 24, "%s: type_object.tp_name", v);
	is_int(o->bytes_size, 16, "%s: bytes_object.ob_size", v);
	is_int(o->bytes_sval, 33, "%s: bytes_object.ob_sval", v);
	is_int(o->unicode_state, 32, "%s: unicode_object.state", v);
	is_int(o->unicode_length, 16, "%s: unicode_object.length", v);
	is_int(o->unicode_ascii_size, 40, "%s: unicode_object.asciiobject_size", v);
	ok(o->unicode_kind_shift == 2 && o->unicode_kind_mask == 7 &&
	    o->unicode_compact_bit == 32 && o->unicode_ascii_bit == 64,
	    "%s: unicode state bits as since 3.3", v);
	ok(o->remote_debug, "%s: debugger_support is usable", v);
	is_int(o->tstate_eval_breaker, 24, "%s: debugger_support.eval_breaker", v);
	is_int(o->tstate_remote_debugger_support, 328, "%s: debugger_support.remote_debugger_support", v);
	is_int(o->interp_remote_debug_enabled, 9104, "%s: debugger_support.remote_debugging_enabled", v);
	is_int(o->debugger_pending_call, 0, "%s: debugger_support.debugger_pending_call", v);
	is_int(o->debugger_script_path, 4, "%s: debugger_support.debugger_script_path", v);
	is_int(o->debugger_script_path_size, 512, "%s: debugger_support.debugger_script_path_size", v);
}

/* Headers of the same minor version, when configured: what they add. */
static void
fake_headers(struct py_offsets *hdr)
{
	memset(hdr, 0, sizeof *hdr);
	hdr->interp_runtime = 7376;
	hdr->gil_size = 208;
	hdr->gil_cond = 32;
	hdr->gil_mutex = 80;
	hdr->unicode_compact_size = 56;
	hdr->unicode_kind_shift = 2;
	hdr->unicode_kind_mask = 7;
	hdr->unicode_compact_bit = 32;
	hdr->unicode_ascii_bit = 64;
	hdr->frame_owned_by_cstack = 3;	/* a 3.13 value must not leak into 3.14+ */
}

static void
test_314(void)
{
	struct debug_offsets_314 d, bad;
	struct py_offsets o, hdr;
	char *cause = NULL;
	int rc;

	image_314(&d);
	rc = parse(&d, sizeof d, V3140, NULL, &o, &cause);
	if (!is_int(rc, FP_OK, "3.14: a valid image parses"))
		diag("%s", cause ? cause : "(no cause)");
	is_int(o.version_hex, V3140, "3.14: version_hex");
	check_shared(&o, "3.14");
	is_int(o.frame_owned_by_cstack, 4, "3.14: FRAME_OWNED_BY_CSTACK = 4, skipped too");
	is_int(o.unicode_compact_size, 56, "3.14: compact header = ascii + 16 without headers");

	fake_headers(&hdr);
	rc = parse(&d, sizeof d, V3140, &hdr, &o, &cause);
	ok(rc == FP_OK && o.interp_runtime == 7376 && o.gil_cond == 32 &&
	    o.gil_mutex == 80 && o.gil_size == 208 && o.frame_owned_by_cstack == 4,
	    "3.14 with headers: unpublished fields from them, owner values from 3.14");

	/* Refusals. */
	bad = d;
	bad.cookie[0] = 'X';
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "cookie"), "3.14: a wrong cookie is refused");
	bad = d;
	bad.free_threaded = 1;
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "free-threaded"),
	    "3.14: a free-threaded build is refused");
	rc = parse_named(&bad, sizeof bad, V3140, "3.14.0", NULL, &o, &cause);
	if (!ok(cause && strcmp(cause, "CPython 3.14.0 free-threaded (3.14t) is not supported: "
	    "its thread states and frames are read differently; use a default (GIL) build") == 0,
	    "3.14: the refusal names the free-threaded build and says what to use"))
		diag("%s", cause ? cause : "(no cause)");
	rc = parse(&d, sizeof d, V3130, NULL, &o, &cause);
	ok(rc == FP_EVERSION, "3.14 offsets in a binary that says 3.13 are refused");
	rc = parse(&d, sizeof d - 8, V3140, NULL, &o, &cause);
	ok(rc == FP_EVERSION, "3.14: a short image is refused");
	bad = d;
	bad.version = 0x030e00b3;
	rc = parse(&bad, sizeof bad, 0x030e00b3, NULL, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "pre-release"), "3.14 betas are refused");
	bad.version = 0x030e00c1;
	rc = parse(&bad, sizeof bad, 0x030e00c1, NULL, &o, &cause);
	is_int(rc, FP_OK, "3.14 release candidates are read");

	bad = d;
	bad.thread_state.current_frame = 880;
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "thread_state.current_frame"),
	    "an offset at its structure's end is refused, and named");
	bad = d;
	bad.interpreter_frame.previous = 12;
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "interpreter_frame.previous"),
	    "a misaligned pointer offset is refused");
	bad = d;
	bad.interpreter_frame.owner = 88;
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_EVERSION, "an owner byte outside the frame is refused");
	bad = d;
	bad.code_object.size = 0;
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "code_object.size"),
	    "a zero structure size is refused");
	bad = d;
	bad.runtime_state.interpreters_head = UINT64_MAX - 3;
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_EVERSION, "an offset that would wrap is refused");
	bad = d;
	bad.thread_state.size = 4096;
	bad.thread_state.native_thread_id = 2048;
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "reads"),
	    "a thread-state field beyond what the reader copies is refused");
	bad = d;
	bad.interpreter_state.gil_runtime_state_holder = 39992;
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_EVERSION, "a GIL field before the GIL is refused");

	/* The PEP 768 section: unusable leaves stacks readable, remote_debug off. */
	bad = d;
	memset(&bad.debugger_support, 0, sizeof bad.debugger_support);
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_OK && !o.remote_debug && o.tstate_eval_breaker == PYOFF_NONE,
	    "a zero debugger_support: stacks still read, no remote debug");
	bad = d;
	bad.debugger_support.debugger_script_path_size = 880;
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_OK && !o.remote_debug, "a script path running off the thread state: no remote debug");
	bad = d;
	bad.debugger_support.eval_breaker = 884;
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_OK && !o.remote_debug, "an eval breaker outside the thread state: no remote debug");
	bad = d;
	bad.debugger_support.remote_debugging_enabled = 200000;
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_OK && !o.remote_debug, "a config flag outside the interpreter: no remote debug");
	bad = d;
	bad.interpreter_state.threads_main = 7353;
	rc = parse(&bad, sizeof bad, V3140, NULL, &o, &cause);
	ok(rc == FP_OK && !o.remote_debug, "a misaligned threads_main: no remote debug");
	free(cause);
}

static void
test_315(void)
{
	struct debug_offsets_315 d, bad;
	struct py_offsets o, hdr;
	char *cause = NULL;
	int rc;

	image_315(&d);
	rc = parse(&d, sizeof d, V3150, NULL, &o, &cause);
	if (!is_int(rc, FP_OK, "3.15: a valid image parses"))
		diag("%s", cause ? cause : "(no cause)");
	is_int(o.version_hex, V3150, "3.15: version_hex");
	check_shared(&o, "3.15");
	is_int(o.frame_owned_by_cstack, PYOFF_NONE, "3.15: no FRAME_OWNED_BY_CSTACK");
	is_int(o.unicode_compact_size, 64, "3.15: compactunicodeobject_size as published");

	fake_headers(&hdr);
	rc = parse(&d, sizeof d, V3150, &hdr, &o, &cause);
	ok(rc == FP_OK && o.interp_runtime == 7376 && o.gil_cond == 32 &&
	    o.frame_owned_by_cstack == PYOFF_NONE && o.unicode_compact_size == 64,
	    "3.15 with headers: unpublished fields from them, published ones from the image");

	/* Pre-releases, builds and versions. */
	bad = d;
	bad.version = 0x030f00b4;
	rc = parse(&bad, sizeof bad, 0x030f00b4, NULL, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "pre-release") && strstr(cause, "3.15.0rc1"),
	    "3.15 betas are refused (b4 moved the thread state)");
	bad.version = 0x030f00c1;
	rc = parse(&bad, sizeof bad, 0x030f00c1, NULL, &o, &cause);
	is_int(rc, FP_OK, "3.15 release candidates are read");
	bad = d;
	bad.free_threaded = 1;
	rc = parse_named(&bad, sizeof bad, V3150, "3.15.0", NULL, &o, &cause);
	if (!ok(rc == FP_EVERSION && cause && strcmp(cause, "CPython 3.15.0 free-threaded (3.15t) "
	    "is not supported: its thread states and frames are read differently; use a default "
	    "(GIL) build") == 0, "3.15: a free-threaded build is refused, and named"))
		diag("%s", cause ? cause : "(no cause)");
	bad = d;
	bad.version = 0x031000a1;
	rc = parse_named(&bad, sizeof bad, 0x031000a1, "3.16.0a1", NULL, &o, &cause);
	if (!ok(rc == FP_EVERSION && cause && strcmp(cause, "CPython 3.16.0a1 is newer than this "
	    "flight_profiler knows (CPython 3.8 to 3.15): upgrade flight_profiler") == 0,
	    "a version newer than the newest known is refused, named, with what to do"))
		diag("%s", cause ? cause : "(no cause)");
	rc = parse(&d, sizeof d, V3140, NULL, &o, &cause);
	ok(rc == FP_EVERSION, "3.15 offsets in a binary that says 3.14 are refused");
	rc = parse(&d, sizeof(struct debug_offsets_314), V3150, NULL, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "too short for 3.15"),
	    "3.15: an image of 3.14's size is too short");

	/* Offsets that do not validate, in what 3.15 moved or added. */
	bad = d;
	bad.thread_state.native_thread_id = 880;
	rc = parse(&bad, sizeof bad, V3150, NULL, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "thread_state.native_thread_id"),
	    "3.15: a thread-state offset at its structure's end is refused, and named");
	bad = d;
	bad.interpreter_frame.executable = 4;
	rc = parse(&bad, sizeof bad, V3150, NULL, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "interpreter_frame.executable"),
	    "3.15: a misaligned f_executable is refused");
	bad = d;
	bad.code_object.size = 1u << 30;
	rc = parse(&bad, sizeof bad, V3150, NULL, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "code_object.size"),
	    "3.15: an absurd structure size is refused");
	bad = d;
	bad.unicode_object.compactunicodeobject_size = 40;
	rc = parse(&bad, sizeof bad, V3150, NULL, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "compactunicodeobject_size"),
	    "3.15: a compact header no larger than the ASCII one is refused");
	bad.unicode_object.compactunicodeobject_size = 80;
	rc = parse(&bad, sizeof bad, V3150, NULL, &o, &cause);
	ok(rc == FP_EVERSION, "3.15: a compact header larger than the object is refused");
	bad = d;
	memset(&bad.debugger_support, 0, sizeof bad.debugger_support);
	rc = parse(&bad, sizeof bad, V3150, NULL, &o, &cause);
	ok(rc == FP_OK && !o.remote_debug, "3.15: a zero debugger_support: stacks read, no remote debug");
	free(cause);
}

/* ---- 3.14 and 3.15 at their published offsets -------------------------------- */

/*
 * The images above are built through our own structures, so a field
 * misplaced in core/debugoffsets.h would be written and read at the same
 * wrong place and pass.  These images are built without them: every field
 * of upstream's _Py_DebugOffsets, in upstream's order, at the byte offset
 * it has there (the 8-byte cookie, then one uint64_t per field; the list
 * must be dense and end at the published total size), written by hand
 * from CPython's own Include/internal/pycore_debug_offsets.h:
 *   3.14: the 3.14 release layout, 760 bytes, as in a CPython fork at
 *         3.14's layout (Kronuz/cpython 34532538; the copy of
 *         python/cpython itself that could be read, 7a57f7c2, is a 3.14
 *         alpha's, from before code_object_generation, the tlbc fields and
 *         llist_node were added).
 *   3.15: main after 3.15.0b4 (taegyunkim/cpython 8543f762, a fork),
 *         888 bytes, the size python/cpython's own reader asserts
 *         (Modules/_remote_debugging/debug_offsets_validation.h at
 *         11f3545d: PY_REMOTE_DEBUG_OFFSETS_TOTAL_SIZE), with the field
 *         names that file validates.
 * A field we read carries the value check_shared() expects; one we do not
 * read carries UNREAD, which no check accepts, so a read from the wrong
 * slot fails by name.
 */
#define UNREAD	UINT64_C(0xbad0bad0bad0bad0)

struct published {
	const char *field;	/* section.field, as upstream spells it */
	size_t off;		/* byte offset in _Py_DebugOffsets */
	uint64_t val;
};

static const struct published published_314[] = {
	{ "runtime_state.size", 24, 300000 },
	{ "runtime_state.finalizing", 32, 608 },
	{ "runtime_state.interpreters_head", 40, 632 },
	{ "interpreter_state.size", 48, 200000 },
	{ "interpreter_state.id", 56, 8 },
	{ "interpreter_state.next", 64, 7264 },
	{ "interpreter_state.threads_head", 72, 7344 },
	{ "interpreter_state.threads_main", 80, 7352 },
	{ "interpreter_state.gc", 88, 9000 },
	{ "interpreter_state.imports_modules", 96, 7656 },
	{ "interpreter_state.sysdict", 104, 7700 },
	{ "interpreter_state.builtins", 112, 7708 },
	{ "interpreter_state.ceval_gil", 120, 16 },
	{ "interpreter_state.gil_runtime_state", 128, 40000 },
	{ "interpreter_state.gil_runtime_state_enabled", 136, UNREAD },
	{ "interpreter_state.gil_runtime_state_locked", 144, 40024 },
	{ "interpreter_state.gil_runtime_state_holder", 152, 40008 },
	{ "interpreter_state.code_object_generation", 160, 50000 },
	{ "interpreter_state.tlbc_generation", 168, UNREAD },
	{ "thread_state.size", 176, 880 },
	{ "thread_state.prev", 184, 0 },
	{ "thread_state.next", 192, 8 },
	{ "thread_state.interp", 200, 16 },
	{ "thread_state.current_frame", 208, 72 },
	{ "thread_state.thread_id", 216, 152 },
	{ "thread_state.native_thread_id", 224, 160 },
	{ "thread_state.datastack_chunk", 232, 232 },
	{ "thread_state.status", 240, 40 },
	{ "interpreter_frame.size", 248, 88 },
	{ "interpreter_frame.previous", 256, 8 },
	{ "interpreter_frame.executable", 264, 0 },
	{ "interpreter_frame.instr_ptr", 272, 56 },
	{ "interpreter_frame.localsplus", 280, 80 },
	{ "interpreter_frame.owner", 288, 74 },
	{ "interpreter_frame.stackpointer", 296, 64 },
	{ "interpreter_frame.tlbc_index", 304, UNREAD },
	{ "code_object.size", 312, 216 },
	{ "code_object.filename", 320, 112 },
	{ "code_object.name", 328, 120 },
	{ "code_object.qualname", 336, 128 },
	{ "code_object.linetable", 344, 136 },
	{ "code_object.firstlineno", 352, 68 },
	{ "code_object.argcount", 360, 52 },
	{ "code_object.localsplusnames", 368, 96 },
	{ "code_object.localspluskinds", 376, 104 },
	{ "code_object.co_code_adaptive", 384, 208 },
	{ "code_object.co_tlbc", 392, UNREAD },
	{ "pyobject.size", 400, 16 },
	{ "pyobject.ob_type", 408, 8 },
	{ "type_object.size", 416, 416 },
	{ "type_object.tp_name", 424, 24 },
	{ "type_object.tp_repr", 432, 88 },
	{ "type_object.tp_flags", 440, 168 },
	{ "tuple_object.size", 448, UNREAD },
	{ "tuple_object.ob_item", 456, UNREAD },
	{ "tuple_object.ob_size", 464, UNREAD },
	{ "list_object.size", 472, UNREAD },
	{ "list_object.ob_item", 480, UNREAD },
	{ "list_object.ob_size", 488, UNREAD },
	{ "set_object.size", 496, UNREAD },
	{ "set_object.used", 504, UNREAD },
	{ "set_object.table", 512, UNREAD },
	{ "set_object.mask", 520, UNREAD },
	{ "dict_object.size", 528, UNREAD },
	{ "dict_object.ma_keys", 536, UNREAD },
	{ "dict_object.ma_values", 544, UNREAD },
	{ "float_object.size", 552, UNREAD },
	{ "float_object.ob_fval", 560, UNREAD },
	{ "long_object.size", 568, UNREAD },
	{ "long_object.lv_tag", 576, UNREAD },
	{ "long_object.ob_digit", 584, UNREAD },
	{ "bytes_object.size", 592, 40 },
	{ "bytes_object.ob_size", 600, 16 },
	{ "bytes_object.ob_sval", 608, 33 },
	{ "unicode_object.size", 616, 72 },
	{ "unicode_object.state", 624, 32 },
	{ "unicode_object.length", 632, 16 },
	{ "unicode_object.asciiobject_size", 640, 40 },
	{ "gc.size", 648, UNREAD },
	{ "gc.collecting", 656, UNREAD },
	{ "gen_object.size", 664, UNREAD },
	{ "gen_object.gi_name", 672, UNREAD },
	{ "gen_object.gi_iframe", 680, UNREAD },
	{ "gen_object.gi_frame_state", 688, UNREAD },
	{ "llist_node.next", 696, UNREAD },
	{ "llist_node.prev", 704, UNREAD },
	{ "debugger_support.eval_breaker", 712, 24 },
	{ "debugger_support.remote_debugger_support", 720, 328 },
	{ "debugger_support.remote_debugging_enabled", 728, 9104 },
	{ "debugger_support.debugger_pending_call", 736, 0 },
	{ "debugger_support.debugger_script_path", 744, 4 },
	{ "debugger_support.debugger_script_path_size", 752, 512 },
};

static const struct published published_315[] = {
	{ "runtime_state.size", 24, 300000 },
	{ "runtime_state.finalizing", 32, 608 },
	{ "runtime_state.interpreters_head", 40, 632 },
	{ "interpreter_state.size", 48, 200000 },
	{ "interpreter_state.id", 56, 8 },
	{ "interpreter_state.next", 64, 7264 },
	{ "interpreter_state.threads_head", 72, 7344 },
	{ "interpreter_state.threads_main", 80, 7352 },
	{ "interpreter_state.gc", 88, 9000 },
	{ "interpreter_state.imports_modules", 96, 7656 },
	{ "interpreter_state.sysdict", 104, 7700 },
	{ "interpreter_state.builtins", 112, 7708 },
	{ "interpreter_state.ceval_gil", 120, 16 },
	{ "interpreter_state.gil_runtime_state", 128, 40000 },
	{ "interpreter_state.gil_runtime_state_enabled", 136, UNREAD },
	{ "interpreter_state.gil_runtime_state_locked", 144, 40024 },
	{ "interpreter_state.gil_runtime_state_holder", 152, 40008 },
	{ "interpreter_state.code_object_generation", 160, 50000 },
	{ "interpreter_state.tlbc_generation", 168, UNREAD },
	{ "thread_state.size", 176, 880 },
	{ "thread_state.prev", 184, 0 },
	{ "thread_state.next", 192, 8 },
	{ "thread_state.interp", 200, 16 },
	{ "thread_state.current_frame", 208, 72 },
	{ "thread_state.base_frame", 216, 80 },
	{ "thread_state.last_profiled_frame", 224, 88 },
	{ "thread_state.last_profiled_frame_seq", 232, 96 },
	{ "thread_state.thread_id", 240, 152 },
	{ "thread_state.native_thread_id", 248, 160 },
	{ "thread_state.datastack_chunk", 256, 232 },
	{ "thread_state.status", 264, 40 },
	{ "thread_state.holds_gil", 272, 800 },
	{ "thread_state.gil_requested", 280, 804 },
	{ "thread_state.current_exception", 288, 808 },
	{ "thread_state.exc_state", 296, 816 },
	{ "err_stackitem.exc_value", 304, UNREAD },
	{ "interpreter_frame.size", 312, 88 },
	{ "interpreter_frame.previous", 320, 8 },
	{ "interpreter_frame.executable", 328, 0 },
	{ "interpreter_frame.instr_ptr", 336, 56 },
	{ "interpreter_frame.localsplus", 344, 80 },
	{ "interpreter_frame.owner", 352, 74 },
	{ "interpreter_frame.stackpointer", 360, 64 },
	{ "interpreter_frame.tlbc_index", 368, UNREAD },
	{ "code_object.size", 376, 216 },
	{ "code_object.filename", 384, 112 },
	{ "code_object.name", 392, 120 },
	{ "code_object.qualname", 400, 128 },
	{ "code_object.linetable", 408, 136 },
	{ "code_object.firstlineno", 416, 68 },
	{ "code_object.argcount", 424, 52 },
	{ "code_object.localsplusnames", 432, 96 },
	{ "code_object.localspluskinds", 440, 104 },
	{ "code_object.co_code_adaptive", 448, 208 },
	{ "code_object.co_tlbc", 456, UNREAD },
	{ "pyobject.size", 464, 16 },
	{ "pyobject.ob_type", 472, 8 },
	{ "type_object.size", 480, 416 },
	{ "type_object.tp_name", 488, 24 },
	{ "type_object.tp_repr", 496, 88 },
	{ "type_object.tp_flags", 504, 168 },
	{ "type_object.tp_basicsize", 512, 32 },
	{ "type_object.tp_dictoffset", 520, 288 },
	{ "heap_type_object.size", 528, 920 },
	{ "heap_type_object.ht_cached_keys", 536, 872 },
	{ "tuple_object.size", 544, UNREAD },
	{ "tuple_object.ob_item", 552, UNREAD },
	{ "tuple_object.ob_size", 560, UNREAD },
	{ "list_object.size", 568, UNREAD },
	{ "list_object.ob_item", 576, UNREAD },
	{ "list_object.ob_size", 584, UNREAD },
	{ "set_object.size", 592, UNREAD },
	{ "set_object.used", 600, UNREAD },
	{ "set_object.table", 608, UNREAD },
	{ "set_object.mask", 616, UNREAD },
	{ "dict_object.size", 624, UNREAD },
	{ "dict_object.ma_keys", 632, UNREAD },
	{ "dict_object.ma_values", 640, UNREAD },
	{ "float_object.size", 648, UNREAD },
	{ "float_object.ob_fval", 656, UNREAD },
	{ "long_object.size", 664, UNREAD },
	{ "long_object.lv_tag", 672, UNREAD },
	{ "long_object.ob_digit", 680, UNREAD },
	{ "bytes_object.size", 688, 40 },
	{ "bytes_object.ob_size", 696, 16 },
	{ "bytes_object.ob_sval", 704, 33 },
	{ "unicode_object.size", 712, 72 },
	{ "unicode_object.state", 720, 32 },
	{ "unicode_object.length", 728, 16 },
	{ "unicode_object.asciiobject_size", 736, 40 },
	{ "unicode_object.compactunicodeobject_size", 744, 64 },
	{ "gc.size", 752, UNREAD },
	{ "gc.collecting", 760, UNREAD },
	{ "gc.frame", 768, UNREAD },
	{ "gc.generation_stats_size", 776, UNREAD },
	{ "gc.generation_stats", 784, UNREAD },
	{ "gen_object.size", 792, UNREAD },
	{ "gen_object.gi_name", 800, UNREAD },
	{ "gen_object.gi_iframe", 808, UNREAD },
	{ "gen_object.gi_frame_state", 816, UNREAD },
	{ "llist_node.next", 824, UNREAD },
	{ "llist_node.prev", 832, UNREAD },
	{ "debugger_support.eval_breaker", 840, 24 },
	{ "debugger_support.remote_debugger_support", 848, 328 },
	{ "debugger_support.remote_debugging_enabled", 856, 9104 },
	{ "debugger_support.debugger_pending_call", 864, 0 },
	{ "debugger_support.debugger_script_path", 872, 4 },
	{ "debugger_support.debugger_script_path_size", 880, 512 },
};

static void
image_published(unsigned char *img, size_t size, uint64_t version, const struct published *p,
    size_t n, const char *v)
{
	size_t i, dense = 0;

	memset(img, 0, size);
	memcpy(img, "xdebugpy", 8);
	memcpy(img + 8, &version, 8);			/* free_threaded (16) stays 0 */
	for (i = 0; i < n; i++) {
		if (p[i].off == 24 + 8 * i && p[i].off + 8 <= size)
			dense++;
		else
			diag("%s: %s at %zu", v, p[i].field, p[i].off);
		memcpy(img + p[i].off, &p[i].val, 8);
	}
	ok(dense == n && 24 + 8 * n == size, "%s: %zu fields, dense, end at %zu bytes", v, n, size);
}

static void
test_published(void)
{
	unsigned char img[888];
	struct py_offsets o;
	char *cause = NULL;
	int rc;

	is_int(sizeof(struct debug_offsets_314), 760, "3.14: our layout has upstream's 760 bytes");
	image_published(img, 760, V3140, published_314, FP_NELEM(published_314), "3.14 published");
	rc = parse(img, 760, V3140, NULL, &o, &cause);
	if (!is_int(rc, FP_OK, "3.14: an image at the published offsets parses"))
		diag("%s", cause ? cause : "(no cause)");
	check_shared(&o, "3.14 published");
	is_int(o.frame_owned_by_cstack, 4, "3.14 published: FRAME_OWNED_BY_CSTACK = 4");
	is_int(o.unicode_compact_size, 56, "3.14 published: compact header derived");
	/* enum _frameowner, 3.14: THREAD 0, GENERATOR 1, FRAME_OBJECT 2, INTERPRETER 3, CSTACK 4. */
	ok(pyframes_chain_may_end(&o, 3, false) && pyframes_chain_may_end(&o, 4, false),
	    "3.14: a chain ends on an interpreter (entry) or C-stack shim");
	ok(!pyframes_chain_may_end(&o, 0, false) && !pyframes_chain_may_end(&o, 1, false),
	    "3.14: a chain ending on a thread's or a generator's frame is short");

	is_int(sizeof(struct debug_offsets_315), 888, "3.15: our layout has upstream's 888 bytes");
	image_published(img, 888, V3150, published_315, FP_NELEM(published_315), "3.15 published");
	rc = parse(img, 888, V3150, NULL, &o, &cause);
	if (!is_int(rc, FP_OK, "3.15: an image at the published offsets parses"))
		diag("%s", cause ? cause : "(no cause)");
	check_shared(&o, "3.15 published");
	is_int(o.frame_owned_by_cstack, PYOFF_NONE, "3.15 published: no FRAME_OWNED_BY_CSTACK");
	is_int(o.unicode_compact_size, 64,
	    "3.15 published: unicode_object.compactunicodeobject_size at 744");
	/*
	 * 3.15 (pycore_interpframe_structs.h): THREAD 0, GENERATOR 1,
	 * FRAME_OBJECT 2, INTERPRETER 3, no CSTACK; every chain ends in the
	 * thread state's base frame, owned by the interpreter.
	 */
	ok(pyframes_chain_may_end(&o, 3, false),
	    "3.15: a chain ending on the base frame (owner 3) is whole");
	ok(!pyframes_chain_may_end(&o, 0, false) && !pyframes_chain_may_end(&o, 1, false) &&
	    !pyframes_chain_may_end(&o, 4, false),
	    "3.15: a chain ending on a thread's or a generator's frame is short; 4 is no owner");
	free(cause);
}

/* ---- 3.13, from the headers' table ------------------------------------------ */

static void
image_from_table(struct debug_offsets_313 *d, const struct py_offsets *t)
{
	const uint64_t gil = 4096;	/* anywhere inside the interpreter */

	memset(d, 0, sizeof *d);
	memcpy(d->cookie, "xdebugpy", 8);
	d->version = t->version_hex;
	d->runtime_state.size = (uint64_t)t->runtime_size;
	d->runtime_state.finalizing = (uint64_t)t->runtime_finalizing;
	d->runtime_state.interpreters_head = (uint64_t)t->runtime_interp_head;
	d->interpreter_state.size = (uint64_t)t->interp_size;
	d->interpreter_state.next = (uint64_t)t->interp_next;
	d->interpreter_state.threads_head = (uint64_t)t->interp_tstate_head;
	d->interpreter_state.imports_modules = (uint64_t)t->interp_modules;
	d->interpreter_state.ceval_gil = (uint64_t)t->interp_gil_ptr;
	d->interpreter_state.gil_runtime_state = gil;
	d->interpreter_state.gil_runtime_state_locked = gil + (uint64_t)t->gil_locked;
	d->interpreter_state.gil_runtime_state_holder = gil + (uint64_t)t->gil_last_holder;
	d->thread_state.size = (uint64_t)t->tstate_size;
	d->thread_state.prev = (uint64_t)t->tstate_prev;
	d->thread_state.next = (uint64_t)t->tstate_next;
	d->thread_state.interp = (uint64_t)t->tstate_interp;
	d->thread_state.current_frame = (uint64_t)t->tstate_frame;
	d->thread_state.thread_id = (uint64_t)t->tstate_thread_id;
	d->thread_state.native_thread_id = (uint64_t)t->tstate_native_thread_id;
	d->thread_state.datastack_chunk = (uint64_t)t->tstate_datastack_chunk;
	d->interpreter_frame.size = (uint64_t)t->frame_size;
	d->interpreter_frame.previous = (uint64_t)t->frame_back;
	d->interpreter_frame.executable = (uint64_t)t->frame_code;
	d->interpreter_frame.instr_ptr = (uint64_t)t->frame_lasti;
	d->interpreter_frame.owner = (uint64_t)t->frame_owner;
	d->code_object.size = (uint64_t)t->code_size;
	d->code_object.filename = (uint64_t)t->code_filename;
	d->code_object.name = (uint64_t)t->code_name;
	d->code_object.qualname = (uint64_t)t->code_qualname;
	d->code_object.linetable = (uint64_t)t->code_linetable;
	d->code_object.firstlineno = (uint64_t)t->code_firstlineno;
	d->code_object.co_code_adaptive = (uint64_t)t->code_code_adaptive;
	d->pyobject.size = 16;
	d->pyobject.ob_type = (uint64_t)t->object_type;
	d->type_object.size = 416;
	d->type_object.tp_name = (uint64_t)t->type_name;
	d->bytes_object.size = (uint64_t)t->bytes_sval + 1;
	d->bytes_object.ob_size = (uint64_t)t->bytes_size;
	d->bytes_object.ob_sval = (uint64_t)t->bytes_sval;
	d->unicode_object.size = (uint64_t)t->unicode_compact_size + 16;
	d->unicode_object.state = (uint64_t)t->unicode_state;
	d->unicode_object.length = (uint64_t)t->unicode_length;
	d->unicode_object.asciiobject_size = (uint64_t)t->unicode_ascii_size;
}

/* Every field of struct py_offsets the 3.13 path fills: equal to the table. */
#define SAME(f) is_int(o.f, t->f, "3.13 from headers: " #f)

static void
test_313(void)
{
	const struct py_offsets *t = NULL;
	struct debug_offsets_313 d, bad;
	struct py_offsets o;
	char *cause = NULL;
	size_t i;
	int rc;

	for (i = 0; i < py_offsets_table_len; i++)
		if ((py_offsets_table[i]->version_hex >> 16) == 0x030d)
			t = py_offsets_table[i];
	if (t == NULL) {
		skip("CPython 3.13 was not configured: no headers to check against",
		    "3.13 mapping against the headers");
		return;
	}
	diag("3.13 image from the tables of the CPython %s headers", t->version);
	image_from_table(&d, t);
	rc = parse(&d, sizeof d, t->version_hex, t, &o, &cause);
	if (!is_int(rc, FP_OK, "3.13: an image of the headers' offsets parses"))
		diag("%s", cause ? cause : "(no cause)");
	is_str(o.source, "_Py_DebugOffsets", "3.13: source");
	SAME(version_hex); SAME(frame_model);
	SAME(runtime_size); SAME(runtime_finalizing); SAME(runtime_interp_head);
	SAME(runtime_tstate_current); SAME(runtime_gil);
	SAME(interp_size); SAME(interp_next); SAME(interp_tstate_head); SAME(interp_runtime);
	SAME(interp_gil_ptr); SAME(interp_modules);
	SAME(gil_size); SAME(gil_last_holder); SAME(gil_locked); SAME(gil_cond); SAME(gil_mutex);
	SAME(tstate_size); SAME(tstate_prev); SAME(tstate_next); SAME(tstate_interp); SAME(tstate_frame);
	SAME(tstate_cframe); SAME(cframe_current_frame); SAME(tstate_thread_id);
	SAME(tstate_native_thread_id); SAME(tstate_datastack_chunk);
	SAME(frame_size); SAME(frame_back); SAME(frame_code); SAME(frame_lasti);
	SAME(frame_is_entry); SAME(frame_owner); SAME(frame_owned_by_cstack);
	SAME(code_size); SAME(code_filename); SAME(code_name); SAME(code_qualname);
	SAME(code_firstlineno); SAME(code_linetable); SAME(code_code_adaptive);
	SAME(object_type); SAME(type_name); SAME(bytes_size); SAME(bytes_sval);
	SAME(unicode_length); SAME(unicode_state); SAME(unicode_ascii_size);
	SAME(unicode_compact_size); SAME(unicode_kind_shift); SAME(unicode_kind_mask);
	SAME(unicode_compact_bit); SAME(unicode_ascii_bit);
	is_int(o.frame_code_tags, 0, "3.13: f_executable is a plain pointer");
	is_int(o.frame_owned_by_interpreter, PYOFF_NONE, "3.13: no FRAME_OWNED_BY_INTERPRETER");
	ok(!o.remote_debug && o.tstate_eval_breaker == PYOFF_NONE, "3.13: no PEP 768");

	rc = parse(&d, sizeof d, t->version_hex, NULL, &o, &cause);
	ok(rc == FP_OK && o.frame_owned_by_cstack == 3 && o.interp_runtime == PYOFF_NONE,
	    "3.13 without headers: FRAME_OWNED_BY_CSTACK 3, nothing unpublished");

	bad = d;
	memcpy(bad.cookie, "xdebugpz", 8);
	rc = parse(&bad, sizeof bad, t->version_hex, t, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "cookie"), "3.13: a wrong cookie is refused");
	bad = d;
	bad.free_threaded = 1;
	rc = parse(&bad, sizeof bad, t->version_hex, t, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "free-threaded"),
	    "3.13: a free-threaded build is refused");
	bad = d;
	bad.interpreter_state.threads_head = bad.interpreter_state.size;
	rc = parse(&bad, sizeof bad, t->version_hex, t, &o, &cause);
	ok(rc == FP_EVERSION && cause && strstr(cause, "interpreter_state.threads_head"),
	    "3.13: an out-of-range offset is refused, and named");
	bad = d;
	bad.code_object.filename = bad.code_object.size + 8;
	rc = parse(&bad, sizeof bad, t->version_hex, t, &o, &cause);
	ok(rc == FP_EVERSION, "3.13: a code field outside the code object is refused");
	rc = parse(&d, sizeof d - 1, t->version_hex, t, &o, &cause);
	ok(rc == FP_EVERSION, "3.13: a short image is refused");
	rc = parse(&d, sizeof d, V3140, t, &o, &cause);
	ok(rc == FP_EVERSION, "3.13 offsets in a binary that says 3.14 are refused");
	free(cause);
}

int
main(void)
{
	test_314();
	test_315();
	test_published();
	test_313();
	return done_testing();
}
