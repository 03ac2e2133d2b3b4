/*
 * debugoffsets — the layouts of CPython's _Py_DebugOffsets, one per minor
 * version, as the interpreter publishes them at the start of _PyRuntime.
 *
 * Each structure mirrors upstream field for field (all uint64_t after the
 * cookie); the layout changes between minor versions (fields are inserted,
 * sections added), so a structure is never reused for another minor
 * version.  pyruntime.c reads them; tests build images from them.  Nothing
 * here may be guessed: a field is added only as upstream spells it.
 */
#ifndef FP_DEBUGOFFSETS_H
#define FP_DEBUGOFFSETS_H

#include <stdint.h>

/* The first three fields are common to every version. */
struct debug_offsets_head {
	char cookie[8];			/* "xdebugpy", not NUL-terminated */
	uint64_t version;		/* PY_VERSION_HEX */
	uint64_t free_threaded;
};

/* 3.13: Include/internal/pycore_runtime.h (v3.13.0). */
struct debug_offsets_313 {
	char cookie[8];
	uint64_t version;
	uint64_t free_threaded;
	struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
	struct {
		uint64_t size, id, next, threads_head, gc, imports_modules,
		    sysdict, builtins, ceval_gil, gil_runtime_state,
		    gil_runtime_state_enabled, gil_runtime_state_locked,
		    gil_runtime_state_holder;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id,
		    native_thread_id, datastack_chunk, status;
	} thread_state;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno,
		    argcount, localsplusnames, localspluskinds, co_code_adaptive;
	} code_object;
	struct { uint64_t size, ob_type; } pyobject;
	struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
	struct { uint64_t size, ob_item, ob_size; } tuple_object;
	struct { uint64_t size, ob_item, ob_size; } list_object;
	struct { uint64_t size, ma_keys, ma_values; } dict_object;
	struct { uint64_t size, ob_fval; } float_object;
	struct { uint64_t size, lv_tag, ob_digit; } long_object;
	struct { uint64_t size, ob_size, ob_sval; } bytes_object;
	struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
	struct { uint64_t size, collecting; } gc;
};

/*
 * 3.14: Include/internal/pycore_debug_offsets.h of the 3.14 release.
 * Against 3.13: interpreter_state gains threads_main (after threads_head)
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
	struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
	struct {
		uint64_t size, id, next, threads_head, threads_main, gc,
		    imports_modules, sysdict, builtins, ceval_gil,
		    gil_runtime_state, gil_runtime_state_enabled,
		    gil_runtime_state_locked, gil_runtime_state_holder,
		    code_object_generation, tlbc_generation;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id,
		    native_thread_id, datastack_chunk, status;
	} thread_state;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner,
		    stackpointer, tlbc_index;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno,
		    argcount, localsplusnames, localspluskinds, co_code_adaptive,
		    co_tlbc;
	} code_object;
	struct { uint64_t size, ob_type; } pyobject;
	struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
	struct { uint64_t size, ob_item, ob_size; } tuple_object;
	struct { uint64_t size, ob_item, ob_size; } list_object;
	struct { uint64_t size, used, table, mask; } set_object;
	struct { uint64_t size, ma_keys, ma_values; } dict_object;
	struct { uint64_t size, ob_fval; } float_object;
	struct { uint64_t size, lv_tag, ob_digit; } long_object;
	struct { uint64_t size, ob_size, ob_sval; } bytes_object;
	struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
	struct { uint64_t size, collecting; } gc;
	struct { uint64_t size, gi_name, gi_iframe, gi_frame_state; } gen_object;
	struct { uint64_t next, prev; } llist_node;
	/*
	 * eval_breaker and remote_debugger_support are offsets in
	 * PyThreadState, remote_debugging_enabled in PyInterpreterState
	 * (config.remote_debug, an int); debugger_pending_call (int32) and
	 * debugger_script_path (char[debugger_script_path_size]) are offsets
	 * in _PyRemoteDebuggerSupport.
	 */
	struct {
		uint64_t eval_breaker, remote_debugger_support,
		    remote_debugging_enabled, debugger_pending_call,
		    debugger_script_path, debugger_script_path_size;
	} debugger_support;
};

/* Sizes as upstream's (every field is a uint64_t after the 8-byte cookie). */
_Static_assert(sizeof(struct debug_offsets_313) == 8 + 72 * 8, "3.13 _Py_DebugOffsets layout");
_Static_assert(sizeof(struct debug_offsets_314) == 8 + 94 * 8, "3.14 _Py_DebugOffsets layout");

#endif
