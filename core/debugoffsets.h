/*
 * debugoffsets — CPython's _Py_DebugOffsets (3.13+), the table of struct
 * sizes and field offsets the interpreter publishes at the start of
 * _PyRuntime: its layout per minor version, and the parser that turns an
 * image of it into the offsets the readers use.
 *
 * Each structure mirrors upstream field for field (all uint64_t after the
 * cookie); the layout changes between minor versions (fields are inserted,
 * sections added), so a structure is never reused for another minor
 * version.  A section that did not change is one named type below, so that
 * a version's structure reads as upstream's list of sections.  Nothing
 * here may be guessed: a field is added only as upstream spells it.  The
 * image comes from another process: every offset is checked before it is
 * used, and nothing here reads or writes the target.
 */
#ifndef FP_DEBUGOFFSETS_H
#define FP_DEBUGOFFSETS_H

#include <stddef.h>
#include <stdint.h>

#include "core/pyoffsets.h"

#define DEBUG_OFFSETS_COOKIE	"xdebugpy"	/* its first 8 bytes, no NUL */

/* The newest minor version whose layout this build knows. */
#define DEBUG_OFFSETS_NEWEST_MINOR	15

/*
 * Fill *o from `image`, the first `len` bytes of a _PyRuntime: check the
 * cookie, that its version has the minor version of `version_hex` (what
 * the binary says; `version` is its text, for messages), that the build is
 * not free-threaded and that every offset used lies inside its structure,
 * aligned, and inside what the readers copy.  3.13, 3.14 and 3.15 (rc and
 * final) layouts are known; a newer minor version is refused with a
 * message saying so.  `hdr` (may be NULL) is the table built from the same
 * minor version's headers, for what _Py_DebugOffsets does not publish.
 * o->version points at `version`.  Returns an enum fp_status (FP_EVERSION
 * when refused).
 */
int debug_offsets_parse(const void *image, size_t len, uint32_t version_hex,
    const char *version, const struct py_offsets *hdr, struct py_offsets *o, char **cause);

/*
 * The refusal of a minor version newer than DEBUG_OFFSETS_NEWEST_MINOR,
 * after `prefix` ("" or "process 12: "), wherever it is found.  Returns
 * FP_EVERSION.
 */
int debug_offsets_refuse_newer(char **cause, const char *prefix, const char *version);

/* The first three fields are common to every version. */
struct debug_offsets_head {
	char cookie[8];			/* "xdebugpy", not NUL-terminated */
	uint64_t version;		/* PY_VERSION_HEX */
	uint64_t free_threaded;
};

/* ---- sections, named after the first version that has them as here ---- */

struct dbg_runtime_state { uint64_t size, finalizing, interpreters_head; };

struct dbg_interpreter_state_313 {
	uint64_t size, id, next, threads_head, gc, imports_modules, sysdict,
	    builtins, ceval_gil, gil_runtime_state, gil_runtime_state_enabled,
	    gil_runtime_state_locked, gil_runtime_state_holder;
};

/* 3.14 and 3.15: threads_main after threads_head, two generations at the end. */
struct dbg_interpreter_state_314 {
	uint64_t size, id, next, threads_head, threads_main, gc,
	    imports_modules, sysdict, builtins, ceval_gil, gil_runtime_state,
	    gil_runtime_state_enabled, gil_runtime_state_locked,
	    gil_runtime_state_holder, code_object_generation, tlbc_generation;
};

struct dbg_thread_state_313 {
	uint64_t size, prev, next, interp, current_frame, thread_id,
	    native_thread_id, datastack_chunk, status;
};

/*
 * 3.15: base_frame (the sentinel frame at the bottom of every thread's
 * chain), last_profiled_frame and last_profiled_frame_seq (a sampler that
 * writes them learns which parent frames did not change) after
 * current_frame; holds_gil, gil_requested, current_exception, exc_state at
 * the end.
 */
struct dbg_thread_state_315 {
	uint64_t size, prev, next, interp, current_frame, base_frame,
	    last_profiled_frame, last_profiled_frame_seq, thread_id,
	    native_thread_id, datastack_chunk, status, holds_gil,
	    gil_requested, current_exception, exc_state;
};

struct dbg_interpreter_frame_313 {
	uint64_t size, previous, executable, instr_ptr, localsplus, owner;
};

struct dbg_interpreter_frame_314 {
	uint64_t size, previous, executable, instr_ptr, localsplus, owner,
	    stackpointer, tlbc_index;
};

struct dbg_code_object_313 {
	uint64_t size, filename, name, qualname, linetable, firstlineno,
	    argcount, localsplusnames, localspluskinds, co_code_adaptive;
};

struct dbg_code_object_314 {
	uint64_t size, filename, name, qualname, linetable, firstlineno,
	    argcount, localsplusnames, localspluskinds, co_code_adaptive, co_tlbc;
};

struct dbg_pyobject { uint64_t size, ob_type; };
struct dbg_type_object_313 { uint64_t size, tp_name, tp_repr, tp_flags; };
struct dbg_type_object_315 {
	uint64_t size, tp_name, tp_repr, tp_flags, tp_basicsize, tp_dictoffset;
};
struct dbg_heap_type_object { uint64_t size, ht_cached_keys; };
struct dbg_seq_object { uint64_t size, ob_item, ob_size; };	/* tuple, list */
struct dbg_set_object { uint64_t size, used, table, mask; };
struct dbg_dict_object { uint64_t size, ma_keys, ma_values; };
struct dbg_float_object { uint64_t size, ob_fval; };
struct dbg_long_object { uint64_t size, lv_tag, ob_digit; };
struct dbg_bytes_object { uint64_t size, ob_size, ob_sval; };
struct dbg_unicode_object_313 { uint64_t size, state, length, asciiobject_size; };
struct dbg_unicode_object_315 {
	uint64_t size, state, length, asciiobject_size, compactunicodeobject_size;
};
struct dbg_gc_313 { uint64_t size, collecting; };
struct dbg_gc_315 {
	uint64_t size, collecting, frame, generation_stats_size, generation_stats;
};
struct dbg_gen_object { uint64_t size, gi_name, gi_iframe, gi_frame_state; };
struct dbg_llist_node { uint64_t next, prev; };		/* no size */

/*
 * PEP 768, 3.14 and 3.15 alike (no size): eval_breaker and
 * remote_debugger_support are offsets in PyThreadState,
 * remote_debugging_enabled in PyInterpreterState (config.remote_debug, an
 * int); debugger_pending_call (int32) and debugger_script_path
 * (char[debugger_script_path_size]) are offsets in _PyRemoteDebuggerSupport.
 */
struct dbg_debugger_support {
	uint64_t eval_breaker, remote_debugger_support,
	    remote_debugging_enabled, debugger_pending_call,
	    debugger_script_path, debugger_script_path_size;
};

/* ---- the versions ---------------------------------------------------- */

/* 3.13: Include/internal/pycore_runtime.h (v3.13.0). */
struct debug_offsets_313 {
	char cookie[8];
	uint64_t version;
	uint64_t free_threaded;
	struct dbg_runtime_state runtime_state;
	struct dbg_interpreter_state_313 interpreter_state;
	struct dbg_thread_state_313 thread_state;
	struct dbg_interpreter_frame_313 interpreter_frame;
	struct dbg_code_object_313 code_object;
	struct dbg_pyobject pyobject;
	struct dbg_type_object_313 type_object;
	struct dbg_seq_object tuple_object;
	struct dbg_seq_object list_object;
	struct dbg_dict_object dict_object;
	struct dbg_float_object float_object;
	struct dbg_long_object long_object;
	struct dbg_bytes_object bytes_object;
	struct dbg_unicode_object_313 unicode_object;
	struct dbg_gc_313 gc;
};

/*
 * 3.14: CPython's Include/internal/pycore_debug_offsets.h of the 3.14
 * release, 760 bytes (read as held by CPython forks at 3.14's layout:
 * Kronuz/cpython 34532538; the copy of python/cpython itself that could
 * be read, 7a57f7c2, is a 3.14 alpha's, from before code_object_generation,
 * the tlbc fields and llist_node were added).  Against 3.13: interpreter_state gains threads_main (after threads_head)
 * and code_object_generation, tlbc_generation (at its end);
 * interpreter_frame gains stackpointer, tlbc_index; code_object gains
 * co_tlbc; new sections set_object (after list_object), gen_object,
 * llist_node (no size) and debugger_support (PEP 768, no size) at the end.
 * The tlbc fields are 0 in builds with the GIL.
 */
struct debug_offsets_314 {
	char cookie[8];
	uint64_t version;
	uint64_t free_threaded;
	struct dbg_runtime_state runtime_state;
	struct dbg_interpreter_state_314 interpreter_state;
	struct dbg_thread_state_313 thread_state;
	struct dbg_interpreter_frame_314 interpreter_frame;
	struct dbg_code_object_314 code_object;
	struct dbg_pyobject pyobject;
	struct dbg_type_object_313 type_object;
	struct dbg_seq_object tuple_object;
	struct dbg_seq_object list_object;
	struct dbg_set_object set_object;
	struct dbg_dict_object dict_object;
	struct dbg_float_object float_object;
	struct dbg_long_object long_object;
	struct dbg_bytes_object bytes_object;
	struct dbg_unicode_object_313 unicode_object;
	struct dbg_gc_313 gc;
	struct dbg_gen_object gen_object;
	struct dbg_llist_node llist_node;
	struct dbg_debugger_support debugger_support;
};

/*
 * 3.15: CPython's Include/internal/pycore_debug_offsets.h of the 3.15
 * release, as on main after 3.15.0b4 (taegyunkim/cpython 8543f762, a
 * fork of main), 888 bytes: PY_REMOTE_DEBUG_OFFSETS_TOTAL_SIZE, asserted
 * against sizeof(_Py_DebugOffsets) in CPython's own reader
 * (python/cpython 11f3545d, Modules/_remote_debugging/
 * debug_offsets_validation.h; the field names are the ones that file
 * validates).  Against 3.14: thread_state as above;
 * a new err_stackitem section (exc_value only, no size) before
 * interpreter_frame; type_object gains tp_basicsize, tp_dictoffset and is
 * followed by a new heap_type_object; unicode_object gains
 * compactunicodeobject_size (sizeof(PyCompactUnicodeObject), which 3.14
 * readers had to assume); gc gains frame, generation_stats_size,
 * generation_stats.  The layout moved during 3.15's betas (b4 inserted
 * last_profiled_frame_seq: python/cpython gh-151614; the v3.15.0b3..b4
 * diff of this header is quoted in bloomberg/pystack#337): release
 * candidates and releases only.
 *
 * tests/unit/debugoffsets.c writes an image of each layout at the byte
 * offsets upstream's header gives, without these structures, so that a
 * field out of place here fails by name.
 */
struct debug_offsets_315 {
	char cookie[8];
	uint64_t version;
	uint64_t free_threaded;
	struct dbg_runtime_state runtime_state;
	struct dbg_interpreter_state_314 interpreter_state;
	struct dbg_thread_state_315 thread_state;
	struct { uint64_t exc_value; } err_stackitem;
	struct dbg_interpreter_frame_314 interpreter_frame;
	struct dbg_code_object_314 code_object;
	struct dbg_pyobject pyobject;
	struct dbg_type_object_315 type_object;
	struct dbg_heap_type_object heap_type_object;
	struct dbg_seq_object tuple_object;
	struct dbg_seq_object list_object;
	struct dbg_set_object set_object;
	struct dbg_dict_object dict_object;
	struct dbg_float_object float_object;
	struct dbg_long_object long_object;
	struct dbg_bytes_object bytes_object;
	struct dbg_unicode_object_315 unicode_object;
	struct dbg_gc_315 gc;
	struct dbg_gen_object gen_object;
	struct dbg_llist_node llist_node;
	struct dbg_debugger_support debugger_support;
};

/* Sizes as upstream's (every field is a uint64_t after the 8-byte cookie). */
_Static_assert(sizeof(struct debug_offsets_313) == 8 + 72 * 8, "3.13 _Py_DebugOffsets layout");
_Static_assert(sizeof(struct debug_offsets_314) == 8 + 94 * 8, "3.14 _Py_DebugOffsets layout");
_Static_assert(sizeof(struct debug_offsets_315) == 888, "3.15 _Py_DebugOffsets layout");

#endif
