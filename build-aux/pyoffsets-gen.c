/*
 * pyoffsets-gen — compiled at build time against ONE configured CPython's
 * internal headers (-DPy_BUILD_CORE) and run to print that version's
 * `struct py_offsets` initializer (see core/pyoffsets.h).
 *
 * Every number printed comes from offsetof()/sizeof() or from measuring a
 * bitfield in memory; nothing is typed by hand.  This program never links
 * libpython and never runs Python.
 *
 * usage: pyoffsets-gen IDENT
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if PY_VERSION_HEX >= 0x03090000
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#else
#include "internal/pycore_pystate.h"
#endif
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#endif
#if PY_VERSION_HEX >= 0x03090000
#include "internal/pycore_gil.h"
#endif
#if PY_VERSION_HEX >= 0x030C0000
#include "internal/pycore_ceval_state.h"
#endif
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_dict.h"
#include "internal/pycore_object.h"
#else
/*
 * 3.8–3.10 keep the dict keys layout in Objects/dict-common.h, which is not
 * installed: its two declarations, as that file has them in 3.8, 3.9 and
 * 3.10 (unchanged between them), so that the offsets below are still the
 * compiler's.
 */
typedef struct {
	Py_hash_t me_hash;
	PyObject *me_key;
	PyObject *me_value;
} PyDictKeyEntry;

struct _dictkeysobject {
	Py_ssize_t dk_refcnt;
	Py_ssize_t dk_size;
	void *dk_lookup;	/* dict_lookup_func */
	Py_ssize_t dk_usable;
	Py_ssize_t dk_nentries;
	char dk_indices[];
};
#endif

#define OFF(type, member) ((long long)offsetof(type, member))

static void
field(const char *name, long long value)
{
	printf("\t.%s = %lldLL,\n", name, value);
}

static void
none(const char *name)
{
	printf("\t.%s = PYOFF_NONE,\n", name);
}

static void
bits(const char *name, unsigned value)
{
	printf("\t.%s = %uu,\n", name, value);
}

/* Position of a bitfield, measured: set it to all ones and look. */
static uint32_t
state_word(const PyASCIIObject *o)
{
	uint32_t w;

	memcpy(&w, (const char *)o + offsetof(PyASCIIObject, state), sizeof w);
	return w;
}

#if PY_VERSION_HEX >= 0x030B0000
/*
 * Where the managed dict (3.11+) lives relative to an object, measured by
 * calling the headers' own accessors on a fake object of a fake type.
 */
static long long
managed_off(int what)
{
	static PyTypeObject tp;
	static _Alignas(16) char mem[256];
	PyObject *obj = (PyObject *)(mem + 128);

	tp.tp_flags = Py_TPFLAGS_MANAGED_DICT;
#if PY_VERSION_HEX >= 0x030D0000
	tp.tp_flags |= Py_TPFLAGS_INLINE_VALUES;
#endif
	tp.tp_basicsize = sizeof(PyObject);
	obj->ob_type = &tp;
#if PY_VERSION_HEX >= 0x030D0000
	return what ? (char *)_PyObject_InlineValues(obj) - (char *)obj :
	    (char *)_PyObject_ManagedDictPointer(obj) - (char *)obj;
#elif PY_VERSION_HEX >= 0x030C0000
	(void)what;
	return (char *)_PyObject_DictOrValuesPointer(obj) - (char *)obj;
#else
	return what ? (char *)_PyObject_ValuesPointer(obj) - (char *)obj :
	    (char *)_PyObject_ManagedDictPointer(obj) - (char *)obj;
#endif
}
#endif

/* Dicts, types and instance attributes: threading's registry of names. */
static void
print_attr_offsets(void)
{
	field("attr.known", 1);
	field("attr.type_flags", OFF(PyTypeObject, tp_flags));
	field("attr.type_dictoffset", OFF(PyTypeObject, tp_dictoffset));
	field("attr.heaptype_cached_keys", OFF(PyHeapTypeObject, ht_cached_keys));
	field("attr.flag_heaptype", (long long)Py_TPFLAGS_HEAPTYPE);
	field("attr.flag_dict_subclass", (long long)Py_TPFLAGS_DICT_SUBCLASS);
	field("attr.flag_unicode_subclass", (long long)Py_TPFLAGS_UNICODE_SUBCLASS);
	field("attr.hash_modulus", (long long)_PyHASH_MODULUS);
	field("attr.dict_keys", OFF(PyDictObject, ma_keys));
	field("attr.dict_values", OFF(PyDictObject, ma_values));
	field("attr.keys_nentries", OFF(PyDictKeysObject, dk_nentries));
	field("attr.keys_indices", OFF(PyDictKeysObject, dk_indices));
	field("attr.entry_size", (long long)sizeof(PyDictKeyEntry));
	field("attr.entry_hash", OFF(PyDictKeyEntry, me_hash));
	field("attr.entry_key", OFF(PyDictKeyEntry, me_key));
	field("attr.entry_value", OFF(PyDictKeyEntry, me_value));
#if PY_VERSION_HEX >= 0x030B0000
	none("attr.keys_size");
	field("attr.keys_log2_size", OFF(PyDictKeysObject, dk_log2_size));
	field("attr.keys_log2_index_bytes", OFF(PyDictKeysObject, dk_log2_index_bytes));
	field("attr.keys_kind", OFF(PyDictKeysObject, dk_kind));
	field("attr.kind_general", (long long)DICT_KEYS_GENERAL);
	field("attr.uentry_size", (long long)sizeof(PyDictUnicodeEntry));
	field("attr.uentry_key", OFF(PyDictUnicodeEntry, me_key));
	field("attr.uentry_value", OFF(PyDictUnicodeEntry, me_value));
	field("attr.values_values", OFF(PyDictValues, values));
	field("attr.flag_managed_dict", (long long)Py_TPFLAGS_MANAGED_DICT);
	field("attr.managed_dict", managed_off(0));
#else
	field("attr.keys_size", OFF(PyDictKeysObject, dk_size));
	none("attr.keys_log2_size");
	none("attr.keys_log2_index_bytes");
	none("attr.keys_kind");
	none("attr.kind_general");
	none("attr.uentry_size");
	none("attr.uentry_key");
	none("attr.uentry_value");
	/* ma_values is a PyObject ** straight to the values (cpython/dictobject.h) */
	field("attr.values_values", 0);
	field("attr.flag_managed_dict", 0);
	none("attr.managed_dict");
#endif
#if PY_VERSION_HEX >= 0x030D0000
	printf("\t.attr.managed = PY_MANAGED_INLINE,\n");
	field("attr.managed_values", managed_off(1));
	field("attr.flag_inline_values", (long long)Py_TPFLAGS_INLINE_VALUES);
	field("attr.values_valid", OFF(PyDictValues, valid));
	field("attr.values_capacity", OFF(PyDictValues, capacity));
#else
#if PY_VERSION_HEX >= 0x030C0000
	printf("\t.attr.managed = PY_MANAGED_TAGGED,\n");
	field("attr.managed_values", managed_off(0));
#elif PY_VERSION_HEX >= 0x030B0000
	printf("\t.attr.managed = PY_MANAGED_VALUES_PTR,\n");
	field("attr.managed_values", managed_off(1));
#else
	printf("\t.attr.managed = PY_MANAGED_NONE,\n");
	none("attr.managed_values");
#endif
	field("attr.flag_inline_values", 0);
	none("attr.values_valid");
	none("attr.values_capacity");
#endif
}

int
main(int argc, char **argv)
{
	PyASCIIObject probe;
	uint32_t kind_mask, compact_bit, ascii_bit;
	unsigned shift;

	if (argc != 2) {
		fprintf(stderr, "usage: %s IDENT\n", argv[0]);
		return 2;
	}

	memset(&probe, 0, sizeof probe);
	probe.state.kind = 7;
	kind_mask = state_word(&probe);
	memset(&probe, 0, sizeof probe);
	probe.state.compact = 1;
	compact_bit = state_word(&probe);
	memset(&probe, 0, sizeof probe);
	probe.state.ascii = 1;
	ascii_bit = state_word(&probe);
	for (shift = 0; shift < 32 && !(kind_mask & (1u << shift)); shift++)
		;

	printf("/* generated by pyoffsets-gen from the CPython %s headers */\n",
	    PY_VERSION);
	printf("static const struct py_offsets py_offsets_%s = {\n", argv[1]);
	printf("\t.version_hex = 0x%08lxu,\n", (unsigned long)PY_VERSION_HEX);
	printf("\t.version = \"%s\",\n", PY_VERSION);
	printf("\t.source = \"headers\",\n");
#if PY_VERSION_HEX >= 0x030B0000
	printf("\t.frame_model = PY_FRAMES_INTERP,\n");
#else
	printf("\t.frame_model = PY_FRAMES_OBJECTS,\n");
#endif

	/* _PyRuntimeState */
	field("runtime_size", (long long)sizeof(_PyRuntimeState));
#if PY_VERSION_HEX >= 0x03090000
	field("runtime_finalizing", OFF(_PyRuntimeState, _finalizing));
#else
	field("runtime_finalizing", OFF(_PyRuntimeState, finalizing));
#endif
	field("runtime_interp_head", OFF(_PyRuntimeState, interpreters.head));
#if PY_VERSION_HEX < 0x030C0000
	field("runtime_tstate_current",
	    OFF(_PyRuntimeState, gilstate.tstate_current));
	field("runtime_gil", OFF(_PyRuntimeState, ceval.gil));
#else
	none("runtime_tstate_current");
	none("runtime_gil");
#endif

	/* PyInterpreterState */
	field("interp_size", (long long)sizeof(PyInterpreterState));
	field("interp_next", OFF(PyInterpreterState, next));
#if PY_VERSION_HEX >= 0x030B0000
	field("interp_tstate_head", OFF(PyInterpreterState, threads.head));
#else
	field("interp_tstate_head", OFF(PyInterpreterState, tstate_head));
#endif
#if PY_VERSION_HEX >= 0x03090000
	field("interp_runtime", OFF(PyInterpreterState, runtime));
#else
	none("interp_runtime");
#endif
#if PY_VERSION_HEX >= 0x030C0000
	field("interp_gil_ptr", OFF(PyInterpreterState, ceval.gil));
#else
	none("interp_gil_ptr");
#endif
#if PY_VERSION_HEX >= 0x030C0000
	field("interp_modules", OFF(PyInterpreterState, imports.modules));
#else
	field("interp_modules", OFF(PyInterpreterState, modules));
#endif

	/* struct _gil_runtime_state */
	field("gil_size", (long long)sizeof(struct _gil_runtime_state));
	field("gil_last_holder", OFF(struct _gil_runtime_state, last_holder));
	field("gil_locked", OFF(struct _gil_runtime_state, locked));
	field("gil_cond", OFF(struct _gil_runtime_state, cond));
	field("gil_mutex", OFF(struct _gil_runtime_state, mutex));

	/* PyThreadState */
	field("tstate_size", (long long)sizeof(PyThreadState));
	field("tstate_prev", OFF(PyThreadState, prev));
	field("tstate_next", OFF(PyThreadState, next));
	field("tstate_interp", OFF(PyThreadState, interp));
#if PY_VERSION_HEX >= 0x030D0000
	field("tstate_frame", OFF(PyThreadState, current_frame));
	none("tstate_cframe");
	none("cframe_current_frame");
	none("cframe_previous");
#elif PY_VERSION_HEX >= 0x030B0000
	none("tstate_frame");
	field("tstate_cframe", OFF(PyThreadState, cframe));
	field("cframe_current_frame", OFF(_PyCFrame, current_frame));
	field("cframe_previous", OFF(_PyCFrame, previous));
#else
	field("tstate_frame", OFF(PyThreadState, frame));
	none("tstate_cframe");
	none("cframe_current_frame");
	none("cframe_previous");
#endif
	field("tstate_thread_id", OFF(PyThreadState, thread_id));
#if PY_VERSION_HEX >= 0x030B0000
	field("tstate_native_thread_id", OFF(PyThreadState, native_thread_id));
	field("tstate_datastack_chunk", OFF(PyThreadState, datastack_chunk));
	field("tstate_datastack_top", OFF(PyThreadState, datastack_top));
#else
	none("tstate_native_thread_id");
	none("tstate_datastack_chunk");
	none("tstate_datastack_top");
#endif

	/* frames */
#if PY_VERSION_HEX >= 0x030B0000
	field("frame_size", (long long)sizeof(_PyInterpreterFrame));
	field("frame_back", OFF(_PyInterpreterFrame, previous));
#if PY_VERSION_HEX >= 0x030D0000
	field("frame_code", OFF(_PyInterpreterFrame, f_executable));
	field("frame_lasti", OFF(_PyInterpreterFrame, instr_ptr));
#else
	field("frame_code", OFF(_PyInterpreterFrame, f_code));
	field("frame_lasti", OFF(_PyInterpreterFrame, prev_instr));
#endif
#if PY_VERSION_HEX < 0x030C0000
	field("frame_is_entry", OFF(_PyInterpreterFrame, is_entry));
	none("frame_owned_by_cstack");
#else
	none("frame_is_entry");
	field("frame_owned_by_cstack", (long long)FRAME_OWNED_BY_CSTACK);
#endif
	field("frame_owner", OFF(_PyInterpreterFrame, owner));
	field("frame_owned_by_generator", (long long)FRAME_OWNED_BY_GENERATOR);
	field("frame_owned_by_thread", (long long)FRAME_OWNED_BY_THREAD);
	field("gen_frame_state", (long long)offsetof(PyGenObject, gi_frame_state) -
	    (long long)offsetof(PyGenObject, gi_iframe));
	field("gen_state_executing", (long long)FRAME_EXECUTING);
	field("chunk_previous", OFF(_PyStackChunk, previous));
	field("chunk_data", OFF(_PyStackChunk, data));
	field("chunk_size", OFF(_PyStackChunk, size));
	none("frame_state");
	none("frame_state_running");
	none("frame_state_unwinding");
#else
	field("frame_size", (long long)sizeof(PyFrameObject));
	field("frame_back", OFF(PyFrameObject, f_back));
	field("frame_code", OFF(PyFrameObject, f_code));
	field("frame_lasti", OFF(PyFrameObject, f_lasti));
	none("frame_is_entry");
	none("frame_owner");
	none("frame_owned_by_cstack");
	none("frame_owned_by_generator");
	none("frame_owned_by_thread");
	none("gen_frame_state");
	none("gen_state_executing");
	none("chunk_previous");
	none("chunk_data");
	none("chunk_size");
#if PY_VERSION_HEX >= 0x030A0000
	field("frame_state", OFF(PyFrameObject, f_state));
	field("frame_state_running", (long long)FRAME_EXECUTING);
	field("frame_state_unwinding", (long long)FRAME_UNWINDING);
#else
	field("frame_state", OFF(PyFrameObject, f_executing));
	field("frame_state_running", 1);
	none("frame_state_unwinding");
#endif
#endif

	/* PyCodeObject */
	field("code_size", (long long)sizeof(PyCodeObject));
	field("code_filename", OFF(PyCodeObject, co_filename));
	field("code_name", OFF(PyCodeObject, co_name));
#if PY_VERSION_HEX >= 0x030B0000
	field("code_qualname", OFF(PyCodeObject, co_qualname));
	field("code_code_adaptive", OFF(PyCodeObject, co_code_adaptive));
#else
	none("code_qualname");
	none("code_code_adaptive");
#endif
	field("code_firstlineno", OFF(PyCodeObject, co_firstlineno));
	field("code_flags", OFF(PyCodeObject, co_flags));
#if PY_VERSION_HEX >= 0x030C0000	/* 3.11 computes it from other fields */
	field("code_framesize", OFF(PyCodeObject, co_framesize));
#else
	none("code_framesize");
#endif
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000	/* 3.11's frame size: from these */
	field("code_nlocalsplus", OFF(PyCodeObject, co_nlocalsplus));
	field("code_stacksize", OFF(PyCodeObject, co_stacksize));
#else
	none("code_nlocalsplus");
	none("code_stacksize");
#endif
#if PY_VERSION_HEX >= 0x030A0000
	field("code_linetable", OFF(PyCodeObject, co_linetable));
#else
	field("code_linetable", OFF(PyCodeObject, co_lnotab));
#endif

	/* objects */
	field("object_type", OFF(PyObject, ob_type));
	field("type_name", OFF(PyTypeObject, tp_name));
	field("bytes_size", OFF(PyVarObject, ob_size));
	field("bytes_sval", OFF(PyBytesObject, ob_sval));
	field("unicode_length", OFF(PyASCIIObject, length));
	field("unicode_state", OFF(PyASCIIObject, state));
	field("unicode_ascii_size", (long long)sizeof(PyASCIIObject));
	field("unicode_compact_size", (long long)sizeof(PyCompactUnicodeObject));
	bits("unicode_kind_shift", shift);
	bits("unicode_kind_mask", kind_mask >> shift);
	bits("unicode_compact_bit", compact_bit);
	bits("unicode_ascii_bit", ascii_bit);
	print_attr_offsets();
	printf("};\n");
	return 0;
}
