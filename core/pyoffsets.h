/*
 * pyoffsets — where things live inside one CPython version's structures.
 *
 * One `struct py_offsets` describes one interpreter build.  For 3.8–3.13
 * the tables are generated at build time (build-aux/pyoffsets-gen.c compiled
 * against each configured interpreter's internal headers; nothing here is
 * typed by hand).  For 3.13+ the same structure is also filled at run time
 * from the target's own _Py_DebugOffsets (see pyruntime.c); 3.14 is read
 * that way only.
 *
 * A field that does not exist in a version holds PYOFF_NONE.  Readers must
 * check before use; they must never guess an offset.
 */
#ifndef FP_PYOFFSETS_H
#define FP_PYOFFSETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PYOFF_NONE INT64_MIN

/* How a thread's frames are chained. */
enum py_frame_model {
	PY_FRAMES_OBJECTS = 1,	/* 3.8–3.10: PyFrameObject, f_back */
	PY_FRAMES_INTERP = 2,	/* 3.11+: _PyInterpreterFrame, previous */
};

/* Where an instance's managed dict (Py_TPFLAGS_MANAGED_DICT) lives. */
enum py_managed_model {
	PY_MANAGED_NONE = 0,	/* 3.8–3.10: a dict pointer at tp_dictoffset */
	PY_MANAGED_VALUES_PTR,	/* 3.11: values pointer and dict pointer before the header */
	PY_MANAGED_TAGGED,	/* 3.12: one word, values (tagged) or dict */
	PY_MANAGED_INLINE,	/* 3.13: values inline after the header, dict before it */
};

/*
 * Dicts, types and instance attributes, for reading threading's registry
 * of thread names (pythreads.c).  From headers only: _Py_DebugOffsets does
 * not publish them, so a table filled from it leaves `known` zero and the
 * readers take these from the same minor version's generated table.
 */
struct py_attr_offsets {
	int64_t known;			/* 1 in generated tables */
	int64_t type_flags;		/* tp_flags */
	int64_t type_dictoffset;	/* tp_dictoffset */
	int64_t heaptype_cached_keys;	/* PyHeapTypeObject.ht_cached_keys */
	int64_t flag_heaptype;		/* Py_TPFLAGS_HEAPTYPE */
	int64_t flag_dict_subclass;	/* Py_TPFLAGS_DICT_SUBCLASS */
	int64_t flag_unicode_subclass;	/* Py_TPFLAGS_UNICODE_SUBCLASS */
	int64_t flag_managed_dict;	/* 3.11+, else 0 */
	int64_t flag_inline_values;	/* 3.13+, else 0 */
	int64_t hash_modulus;		/* hash(n) == n for 0 <= n < this */
	int managed;			/* enum py_managed_model */
	int64_t managed_dict;		/* dict (3.12: dict-or-values) word, from the object */
	int64_t managed_values;		/* values pointer (3.11) / inline values (3.13) */
	int64_t values_values;		/* PyDictValues.values (0: a plain array) */
	int64_t values_valid;		/* 3.13 */
	int64_t values_capacity;	/* 3.13 */

	int64_t dict_keys;		/* PyDictObject */
	int64_t dict_values;
	int64_t keys_size;		/* 3.8–3.10 dk_size */
	int64_t keys_log2_size;		/* 3.11+, uint8_t */
	int64_t keys_log2_index_bytes;	/* 3.11+, uint8_t */
	int64_t keys_kind;		/* 3.11+, uint8_t */
	int64_t kind_general;		/* 3.11+ DICT_KEYS_GENERAL */
	int64_t keys_nentries;
	int64_t keys_indices;
	int64_t entry_size;		/* PyDictKeyEntry */
	int64_t entry_hash;
	int64_t entry_key;
	int64_t entry_value;
	int64_t uentry_size;		/* 3.11+ PyDictUnicodeEntry */
	int64_t uentry_key;
	int64_t uentry_value;
};

struct py_offsets {
	uint32_t version_hex;		/* PY_VERSION_HEX of the headers */
	const char *version;		/* "3.11.7" */
	const char *source;		/* "headers" or "_Py_DebugOffsets" */
	int frame_model;		/* enum py_frame_model */

	/* _PyRuntimeState */
	int64_t runtime_size;
	int64_t runtime_finalizing;
	int64_t runtime_interp_head;
	int64_t runtime_tstate_current;	/* 3.8–3.11 gilstate.tstate_current */
	int64_t runtime_gil;		/* 3.8–3.11 ceval.gil (embedded struct) */

	/* PyInterpreterState */
	int64_t interp_size;
	int64_t interp_next;
	int64_t interp_tstate_head;
	int64_t interp_runtime;		/* 3.9+: back pointer, for validation */
	int64_t interp_gil_ptr;		/* 3.12+: ceval.gil (pointer) */
	int64_t interp_modules;

	/* struct _gil_runtime_state (relative to the gil) */
	int64_t gil_size;
	int64_t gil_last_holder;
	int64_t gil_locked;
	int64_t gil_cond;
	int64_t gil_mutex;

	/* PyThreadState */
	int64_t tstate_size;
	int64_t tstate_prev;
	int64_t tstate_next;
	int64_t tstate_interp;
	int64_t tstate_frame;		/* 3.8–3.10 frame, 3.13+ current_frame */
	int64_t tstate_cframe;		/* 3.11–3.12 cframe (pointer) */
	int64_t cframe_current_frame;	/* 3.11–3.12, inside _PyCFrame */
	int64_t cframe_previous;	/* 3.11–3.12, NULL in the root _PyCFrame */
	int64_t tstate_thread_id;
	int64_t tstate_native_thread_id;	/* 3.11+ */
	int64_t tstate_datastack_chunk;	/* 3.11+ */
	int64_t tstate_datastack_top;	/* 3.11–3.13 (not in 3.14+'s debug offsets) */

	/* PyFrameObject (3.8–3.10) or _PyInterpreterFrame (3.11+) */
	int64_t frame_size;
	int64_t frame_back;		/* f_back / previous */
	int64_t frame_code;		/* f_code / f_executable */
	int64_t frame_lasti;		/* f_lasti / prev_instr / instr_ptr */
	int64_t frame_is_entry;		/* 3.11 only */
	int64_t frame_owner;		/* 3.11+ */
	int64_t frame_owned_by_cstack;	/* 3.12+: owner value of shim frames */
	int64_t frame_owned_by_generator;	/* 3.11+: owner of generator frames */
	int64_t frame_owned_by_thread;	/* 3.11+: owner of frames on the data stack */
	/*
	 * 3.11+: a generator's frame is embedded in it (gi_iframe) and runs
	 * only while the generator's gi_frame_state (int8) is FRAME_EXECUTING.
	 * gen_frame_state is that field's offset from the frame (negative).
	 */
	int64_t gen_frame_state;
	int64_t gen_state_executing;
	/* 3.11+ _PyStackChunk: a thread's data stack, root chunk first */
	int64_t chunk_previous;
	int64_t chunk_data;
	int64_t chunk_size;	/* its size in bytes, header included */
	/*
	 * 3.8–3.10: whether a frame still runs, the one sign of a frame that
	 * returned or a generator that yielded under a read (1 byte: 3.8–3.9
	 * f_executing, 1 while running; 3.10 f_state, FRAME_EXECUTING or
	 * FRAME_UNWINDING while running).
	 */
	int64_t frame_state;
	int64_t frame_state_running;
	int64_t frame_state_unwinding;	/* 3.10 only */

	/* PyCodeObject */
	int64_t code_size;
	int64_t code_filename;
	int64_t code_name;
	int64_t code_qualname;		/* 3.11+ */
	int64_t code_firstlineno;
	int64_t code_linetable;		/* co_lnotab (3.8–3.9), co_linetable */
	int64_t code_code_adaptive;	/* 3.11+ */
	int64_t code_framesize;		/* 3.12–3.13 (int, in pointers) */
	int64_t code_nlocalsplus;	/* 3.11 (int): its frame size is computed from these */
	int64_t code_stacksize;		/* 3.11 (int) */
	int64_t code_flags;		/* co_flags (int): 3.13's shim code is CO_NO_MONITORING_EVENTS */

	/* PyObject, PyTypeObject, PyBytesObject, PyUnicodeObject */
	int64_t object_type;
	int64_t type_name;
	int64_t bytes_size;
	int64_t bytes_sval;
	int64_t unicode_length;
	int64_t unicode_state;
	int64_t unicode_ascii_size;	/* sizeof(PyASCIIObject) */
	int64_t unicode_compact_size;	/* sizeof(PyCompactUnicodeObject) */
	/* bit layout of the `state` bitfield, measured from the headers */
	uint32_t unicode_kind_shift;
	uint32_t unicode_kind_mask;
	uint32_t unicode_compact_bit;
	uint32_t unicode_ascii_bit;

	/*
	 * 3.14+ only, filled from _Py_DebugOffsets and never by the generated
	 * tables (which leave them zero: pyruntime.c sets them to "absent"
	 * whenever it uses a table).
	 *
	 * 3.14 turned f_executable into a _PyStackRef: a pointer whose low
	 * bits are tags (Py_TAG_BITS = 3 with the GIL, pycore_stackref.h);
	 * clear frame_code_tags before using it.  3.14 also inserted
	 * FRAME_OWNED_BY_INTERPRETER = 3 (the entry frame each C call of the
	 * evaluation loop pushes) before FRAME_OWNED_BY_CSTACK, now 4
	 * (pycore_interpframe_structs.h); both mark frames that are not Python
	 * code.  3.15 removed FRAME_OWNED_BY_CSTACK (frame_owned_by_cstack is
	 * then PYOFF_NONE) and keeps the rest.
	 */
	uint64_t frame_code_tags;		/* 0: a plain pointer (<= 3.13) */
	int64_t frame_owned_by_interpreter;	/* PYOFF_NONE before 3.14 */

	/*
	 * PEP 768 remote execution (3.14+, _Py_DebugOffsets.debugger_support).
	 * Valid only when remote_debug is true.
	 */
	bool remote_debug;
	int64_t interp_threads_main;		/* PyThreadState *, main thread */
	int64_t interp_remote_debug_enabled;	/* int config.remote_debug */
	int64_t tstate_eval_breaker;		/* uintptr_t */
	int64_t tstate_remote_debugger_support;	/* _PyRemoteDebuggerSupport */
	int64_t debugger_pending_call;		/* int32, inside the above */
	int64_t debugger_script_path;		/* char[], inside the above */
	int64_t debugger_script_path_size;	/* its size, NUL included */

	struct py_attr_offsets attr;	/* generated tables only: see above */
};

/*
 * How much of each structure the readers copy at once (pystack.c): every
 * field they use must lie inside these spans, and pyruntime.c refuses
 * offsets that do not.
 */
#define PYOFF_TSTATE_SPAN	1024
#define PYOFF_FRAME_SPAN	256
#define PYOFF_CODE_SPAN		512
#define PYOFF_UNICODE_SPAN	128

/*
 * The bytes of a thread state, from its start, that hold every field the
 * readers use (next ... datastack_top), at most tstate_size and
 * PYOFF_TSTATE_SPAN.  A thread state is read a few times each sample, and
 * every page a read touches costs the kernel a pin: 3.11's main thread
 * state ends 96 bytes into the next page, past the fields read.
 */
size_t py_offsets_tstate_used(const struct py_offsets *o);

/*
 * The same for the fields of its thread list and its stack's head alone
 * (next ... native_thread_id, not the data stack's): what a sampler's
 * tick reads of a state whose data stack's fields lie on a page of their
 * own (3.11.7's main thread: pyframes.c, read_thread_frames_once).
 */
size_t py_offsets_tstate_head_used(const struct py_offsets *o);

/* Generated at build time, one entry per configured interpreter. */
extern const struct py_offsets *const py_offsets_table[];
extern const size_t py_offsets_table_len;

/*
 * The table built for exactly this version, else the one of the same minor
 * version with the nearest micro version; NULL when the minor version was
 * not configured.  *exact tells which.
 */
const struct py_offsets *py_offsets_find(uint32_t version_hex, int *exact);

/* "3.8 3.9 …": the minor versions this build knows, for messages. */
const char *py_offsets_known_versions(void);

#endif
