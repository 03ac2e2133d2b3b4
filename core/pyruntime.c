#include "config.h"

#include "core/pyruntime.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/debugoffsets.h"
#include "core/elfimage.h"
#include "core/memread.h"
#include "core/util.h"

static const char debug_cookie[8] = { 'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y' };

/* One ELF file mapped in the target that may hold the runtime. */
struct candidate {
	const char *path;	/* as in /proc/<pid>/maps */
	struct elf_image *img;
	uint64_t bias;
	bool libpython;
};

/* "3.12.1", "3.16.0a1", "3.15.0rc2": PY_VERSION as the interpreter spells it. */
static void
set_version(struct pyruntime *rt, uint32_t hex)
{
	static const char *const level[16] = { [0xa] = "a", [0xb] = "b", [0xc] = "rc" };
	unsigned micro = (hex >> 8) & 0xff, lv = (hex >> 4) & 0xf;

	rt->version_hex = hex;
	if (micro == 0xff)
		snprintf(rt->version, sizeof rt->version, "%u.%u", hex >> 24,
		    (hex >> 16) & 0xff);
	else if (level[lv] != NULL)
		snprintf(rt->version, sizeof rt->version, "%u.%u.%u%s%u", hex >> 24,
		    (hex >> 16) & 0xff, micro, level[lv], hex & 0xf);
	else
		snprintf(rt->version, sizeof rt->version, "%u.%u.%u", hex >> 24,
		    (hex >> 16) & 0xff, micro);
}

/* Load bias of `path`: where its first PT_LOAD landed minus its vaddr. */
static bool
find_bias(const struct proc_maps *maps, const char *path, struct elf_image *img,
    uint64_t *bias)
{
	const struct elf_segment *segs;
	size_t nsegs, i;

	segs = elf_image_segments(img, &nsegs);
	if (nsegs == 0)
		return false;
	for (i = 0; i < maps->n; i++) {
		const struct proc_map *m = &maps->maps[i];

		if (m->path == NULL || strcmp(m->path, path) != 0)
			continue;
		if (m->offset == (segs[0].offset & ~0xfffull)) {
			*bias = m->start - (segs[0].vaddr & ~0xfffull);
			if (!elf_image_is_dyn(img) && *bias != 0)
				return false;
			return true;
		}
	}
	return false;
}

static bool
is_libpython(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, "libpython3", 10) == 0 && strstr(base, ".so") != NULL;
}

/* The minor version in a name like libpython3.11.so.1.0; -1 if none. */
static int
minor_from_name(const char *path)
{
	const char *p = strstr(path, "libpython3.");

	if (p == NULL || !isdigit((unsigned char)p[11]))
		return -1;
	return atoi(p + 11);
}

/*
 * Find "3.M.u" "\0" in the read-only data: PY_VERSION as compiled into
 * Py_GetVersion().  Only used before 3.11, which has no Py_Version.
 */
static uint32_t
version_from_rodata(struct elf_image *img, int minor)
{
	const struct elf_segment *segs;
	size_t nsegs, i, nlen;
	uint32_t found = 0;
	char needle[16];

	/* "3.10." when the library name told the minor version, else "3.". */
	if (minor >= 0)
		snprintf(needle, sizeof needle, "3.%d.", minor);
	else
		snprintf(needle, sizeof needle, "3.");
	nlen = strlen(needle);
	segs = elf_image_segments(img, &nsegs);
	for (i = 0; i < nsegs && found == 0; i++) {
		size_t len = segs[i].filesz, j;
		const char *buf, *p;

		if (segs[i].write || segs[i].exec || len == 0)
			continue;
		buf = elf_image_bytes(img, segs[i].vaddr, len);
		if (buf == NULL)
			continue;
		/* memmem jumps between candidates: the segment is a megabyte or two. */
		for (p = buf + 1; found == 0 && p < buf + len - 8 &&
		    (p = memmem(p, (size_t)(buf + len - p), needle, nlen)) != NULL; p++) {
			unsigned ma, mi, mc;
			char tail;
			int used = 0;

			j = (size_t)(p - buf);
			if (j == 0 || j + 8 >= len)
				continue;
			/*
			 * The linker may share PY_VERSION with the tail of a longer
			 * string ("…/Python-3.9.18"): accept any non-version byte
			 * before it.
			 */
			if (buf[j + 2] < '0' || buf[j + 2] > '9' ||
			    (buf[j - 1] >= '0' && buf[j - 1] <= '9') || buf[j - 1] == '.')
				continue;
			if (memchr(buf + j, '\0', len - j > 16 ? 16 : len - j) == NULL)
				continue;
			if (sscanf(buf + j, "%u.%u.%u%n%c", &ma, &mi, &mc, &used, &tail) < 3)
				continue;
			if (buf[j + used] != '\0' && buf[j + used] != '+')
				continue;
			if (ma != 3 || mi < 6 || mi > 40 || mc > 99)
				continue;
			if (minor >= 0 && (int)mi != minor)
				continue;
			found = (3u << 24) | (mi << 16) | (mc << 8) | 0xf0;
		}
	}
	return found;
}

/* Exact version of the interpreter in this candidate, 0 if not Python. */
static uint32_t
detect_version(struct pyruntime *rt, struct candidate *c)
{
	uint64_t addr;
	uint32_t hex = 0;
	int minor;

	if (elf_image_dynsym(c->img, "Py_Version", &addr, NULL)) {
		/* 3.11+: const unsigned long Py_Version = PY_VERSION_HEX. */
		if (mem_read(rt->pid, addr + c->bias, &hex, sizeof hex) == 0 ||
		    elf_image_read(c->img, addr, &hex, sizeof hex))
			if ((hex >> 24) == 3)
				return hex;
	}
	minor = minor_from_name(c->path);
	if (minor < 0 && !elf_image_dynsym(c->img, "_PyRuntime", &addr, NULL) &&
	    !elf_image_dynsym(c->img, "Py_Initialize", &addr, NULL))
		return 0;
	hex = version_from_rodata(c->img, minor);
	if (hex == 0 && minor >= 0)
		hex = (3u << 24) | ((uint32_t)minor << 16) | 0xfff0;	/* micro unknown */
	return hex;
}

static bool
env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v != NULL && strcmp(v, value) == 0;
}

static bool
layer_allowed(const char *layer)
{
	const char *forced = getenv("FP_RUNTIME_LAYER");

	return forced == NULL || *forced == '\0' || strcmp(forced, layer) == 0;
}

/*
 * Does `addr` look like a live _PyRuntimeState for these offsets?  The
 * first interpreter must be readable, its thread list must point back at
 * it and (3.9+) it must point back at the runtime.
 */
static bool
runtime_valid(pid_t pid, const struct py_offsets *off, uint64_t addr)
{
	uint64_t interp, tstate, back;

	if (mem_read_u64(pid, addr + (uint64_t)off->runtime_interp_head, &interp) != 0 ||
	    !mem_ptr_ok(interp, 8))
		return false;
	if (off->interp_runtime != PYOFF_NONE) {
		if (mem_read_u64(pid, interp + (uint64_t)off->interp_runtime, &back) != 0 ||
		    back != addr)
			return false;
	}
	if (mem_read_u64(pid, interp + (uint64_t)off->interp_tstate_head, &tstate) != 0)
		return false;
	if (tstate == 0)
		return off->interp_runtime != PYOFF_NONE;
	if (!mem_ptr_ok(tstate, 8) ||
	    mem_read_u64(pid, tstate + (uint64_t)off->tstate_interp, &back) != 0)
		return false;
	return back == interp;
}

/* Scan the candidate's writable segments for 8-byte aligned `pred` hits. */
static uint64_t
scan_writable(struct pyruntime *rt, struct candidate *c,
    bool (*pred)(struct pyruntime *, const char *, size_t, uint64_t))
{
	const struct elf_segment *segs;
	size_t nsegs, i;

	segs = elf_image_segments(c->img, &nsegs);
	for (i = 0; i < nsegs; i++) {
		uint64_t start = segs[i].vaddr + c->bias, len = segs[i].memsz, pos;
		enum { CHUNK = 1 << 16 };
		char *buf;

		if (!segs[i].write || len > (64u << 20))
			continue;
		start &= ~7ull;
		buf = xmalloc(CHUNK + 64);
		for (pos = 0; pos < len; pos += CHUNK) {
			size_t n = len - pos < CHUNK ? (size_t)(len - pos) : CHUNK, j;

			if (mem_read(rt->pid, start + pos, buf, n) != 0)
				continue;
			for (j = 0; j + 8 <= n; j += 8) {
				if (pred(rt, buf + j, n - j, start + pos + j)) {
					free(buf);
					return start + pos + j;
				}
			}
		}
		free(buf);
	}
	return 0;
}

static bool
is_cookie(struct pyruntime *rt, const char *p, size_t avail, uint64_t addr)
{
	return avail >= 8 && memcmp(p, debug_cookie, 8) == 0;
}

static bool
is_runtime(struct pyruntime *rt, const char *p, size_t avail, uint64_t addr)
{
	uint64_t v;

	if (avail < (size_t)rt->off.runtime_interp_head + 8)
		return false;
	v = mem_field_u64(p, rt->off.runtime_interp_head);
	return mem_ptr_ok(v, 8) && runtime_valid(rt->pid, &rt->off, addr);
}

/* ---- _Py_DebugOffsets (3.13+) ------------------------------------------- */

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
 * The fields 3.13 and 3.14 share, under the same names: a macro because
 * they sit at different places of two different structures.  Each field is
 * checked against the size of its own structure as published.
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

/* One message for a minor version newer than this build knows, wherever found. */
static int
refuse_newer(char **cause, const char *prefix, const char *version)
{
	return fail(cause, FP_EVERSION, "%sCPython %s is newer than this flight_profiler knows "
	    "(CPython 3.8 to 3.%u): upgrade flight_profiler", prefix, version,
	    PYRUNTIME_NEWEST_MINOR);
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
 * took from the headers or assumed.  It does not publish anything this
 * reader needs that 3.14 lacked: last_profiled_frame helps only a sampler
 * that writes into the target, which reading stacks never does.
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
	o->frame_is_entry = PYOFF_NONE;
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
pyruntime_parse_debug_offsets(const void *image, size_t len, uint32_t version_hex,
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
	if (memcmp(head.cookie, debug_cookie, 8) != 0)
		return fail(cause, FP_EVERSION, "_PyRuntime does not start with the _Py_DebugOffsets "
		    "cookie \"xdebugpy\"");
	if ((head.version >> 24) != 3 || (head.version >> 16) != (version_hex >> 16))
		return fail(cause, FP_EVERSION, "_Py_DebugOffsets is for version 0x%llx, the binary "
		    "says %s", (unsigned long long)head.version, version);
	minor = (unsigned)(head.version >> 16) & 0xff;
	if (minor > PYRUNTIME_NEWEST_MINOR)
		return refuse_newer(cause, "", version);
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

/* Fill rt->off from the target's _Py_DebugOffsets (3.13+). */
static int
offsets_from_debug(struct pyruntime *rt, char **cause)
{
	unsigned char image[sizeof(struct debug_offsets_315)];
	const struct py_offsets *hdr;
	char *why = NULL;
	int exact, rc;

	/* _PyRuntimeState is far larger than any layout: reading the largest is safe. */
	_Static_assert(sizeof image >= sizeof(struct debug_offsets_313) &&
	    sizeof image >= sizeof(struct debug_offsets_314), "image holds every layout");
	if (mem_read(rt->pid, rt->runtime, image, sizeof image) != 0)
		return fail(cause, FP_EEXITED, "cannot read _Py_DebugOffsets of process %d: %s",
		    (int)rt->pid, strerror(errno));
	hdr = py_offsets_find(rt->version_hex, &exact);
	if (hdr != NULL && (hdr->version_hex >> 16) != (rt->version_hex >> 16))
		hdr = NULL;
	rc = pyruntime_parse_debug_offsets(image, sizeof image, rt->version_hex, rt->version, hdr,
	    &rt->off, &why);
	if (rc != FP_OK) {
		fail(cause, rc, "process %d: %s", (int)rt->pid, why);
		free(why);
		return rc;
	}
	rt->offsets_exact = true;
	return FP_OK;
}

/*
 * Offsets from a table generated from headers.  The tables describe
 * 3.8–3.13 and carry none of the fields only _Py_DebugOffsets of 3.14+
 * fill (the generator leaves them zero): mark those absent.
 */
static void
use_table(struct pyruntime *rt, const struct py_offsets *t, bool exact)
{
	rt->off = *t;
	rt->offsets_exact = exact;
	rt->off.frame_code_tags = 0;
	rt->off.frame_owned_by_interpreter = PYOFF_NONE;
	rt->off.remote_debug = false;
	rt->off.interp_threads_main = PYOFF_NONE;
	rt->off.interp_remote_debug_enabled = PYOFF_NONE;
	rt->off.tstate_eval_breaker = PYOFF_NONE;
	rt->off.tstate_remote_debugger_support = PYOFF_NONE;
	rt->off.debugger_pending_call = PYOFF_NONE;
	rt->off.debugger_script_path = PYOFF_NONE;
	rt->off.debugger_script_path_size = 0;
}

static int
choose_offsets(struct pyruntime *rt, char **cause)
{
	const struct py_offsets *t;
	unsigned minor = (rt->version_hex >> 16) & 0xff;
	int exact;

	if (minor < 8)
		return fail(cause, FP_EVERSION,
		    "process %d runs CPython %s, which is not supported: flight_profiler reads CPython 3.8 and newer",
		    (int)rt->pid, rt->version);
	if (minor > PYRUNTIME_NEWEST_MINOR) {
		char prefix[32];

		snprintf(prefix, sizeof prefix, "process %d: ", (int)rt->pid);
		return refuse_newer(cause, prefix, rt->version);
	}
	t = py_offsets_find(rt->version_hex, &exact);
	if (t == NULL && minor < 13)
		return fail(cause, FP_EVERSION,
		    "process %d runs CPython %s, but this build of flight_profiler knows only %s; "
		    "rebuild with ./configure --with-python=/path/to/python3.%u",
		    (int)rt->pid, rt->version, py_offsets_known_versions(), minor);
	if (t != NULL && minor < 14) {
		use_table(rt, t, exact);
		if ((rt->version_hex & 0xff00) == 0xff00) {
			/* Micro version unknown: report what the tables were built from. */
			snprintf(rt->version, sizeof rt->version, "%u.%u", rt->version_hex >> 24, minor);
		}
	}
	return FP_OK;
}

static int
locate_runtime(struct pyruntime *rt, struct candidate *c, char **cause)
{
	uint64_t addr, size;
	unsigned minor = (rt->version_hex >> 16) & 0xff;
	bool is313 = minor >= 13 && (rt->version_hex >> 24) == 3;
	/*
	 * 3.13 can be read either way (FP_OFFSETS=headers, for tests); 3.14+
	 * only from _Py_DebugOffsets: no table has its stackref tags.
	 */
	bool from_debug = is313 && (minor >= 14 || !env_is("FP_OFFSETS", "headers"));
	int rc;

	rt->runtime = 0;
	if (layer_allowed("section") &&
	    elf_image_section(c->img, ".PyRuntime", &addr, &size) && size >= 64) {
		rt->runtime = addr + c->bias;
		rt->layer = ".PyRuntime section";
	} else if (layer_allowed("symbol") &&
	    elf_image_symbol(c->img, "_PyRuntime", &addr, &size)) {
		rt->runtime = addr + c->bias;
		rt->layer = "_PyRuntime symbol";
	} else if (is313 && layer_allowed("cookie")) {
		rt->runtime = scan_writable(rt, c, is_cookie);
		rt->layer = "_Py_DebugOffsets cookie scan";
	}
	if (rt->runtime == 0 && layer_allowed("scan") && rt->off.version_hex != 0) {
		rt->runtime = scan_writable(rt, c, is_runtime);
		rt->layer = "validated BSS scan";
	}
	if (rt->runtime == 0)
		return fail(cause, FP_ENOTPY, "process %d: %s is Python %s but its runtime state was not found",
		    (int)rt->pid, c->path, rt->version);
	if (from_debug) {
		if ((rc = offsets_from_debug(rt, cause)) != FP_OK)
			return rc;
	} else if (rt->off.version_hex == 0) {
		return fail(cause, FP_EVERSION,
		    "process %d runs CPython %s and this build has no offsets for it (known: %s)",
		    (int)rt->pid, rt->version, py_offsets_known_versions());
	}
	if (!runtime_valid(rt->pid, &rt->off, rt->runtime))
		return fail(cause, FP_ERR, "process %d: the CPython %s runtime at 0x%llx (%s) does not validate: "
		    "Python is starting up or shutting down, or the offsets are wrong",
		    (int)rt->pid, rt->version, (unsigned long long)rt->runtime, rt->layer);
	return FP_OK;
}

int
pyruntime_main_interp(struct pyruntime *rt, uint64_t *interp, char **cause)
{
	if (mem_read_u64(rt->pid, rt->runtime + (uint64_t)rt->off.runtime_interp_head, interp) != 0) {
		if (!procfs_exists(rt->pid))
			return fail(cause, FP_EEXITED, "process %d exited while being read", (int)rt->pid);
		return fail(cause, FP_ERR, "process %d: cannot read the interpreter list: %s",
		    (int)rt->pid, strerror(errno));
	}
	if (*interp == 0)
		return fail(cause, FP_ERR, "process %d: Python is not initialized yet, or is finalizing", (int)rt->pid);
	if (!mem_ptr_ok(*interp, 8))
		return fail(cause, FP_ERR, "process %d: the interpreter list is corrupt (0x%llx)",
		    (int)rt->pid, (unsigned long long)*interp);
	return FP_OK;
}

void
pyruntime_dump_offsets(const struct py_offsets *o, FILE *out, const char *prefix)
{
#define I64(f) fprintf(out, "%s" #f " = %s\n", prefix, \
	    o->f == PYOFF_NONE ? "none" : (snprintf(num, sizeof num, "%lld", (long long)o->f), num))
#define U64(f) fprintf(out, "%s" #f " = %llu\n", prefix, (unsigned long long)o->f)
	char num[32];

	fprintf(out, "%sversion = %s (0x%08x)\n", prefix, o->version ? o->version : "?",
	    (unsigned)o->version_hex);
	fprintf(out, "%ssource = %s\n", prefix, o->source ? o->source : "?");
	I64(frame_model);
	I64(runtime_size); I64(runtime_finalizing); I64(runtime_interp_head);
	I64(runtime_tstate_current); I64(runtime_gil);
	I64(interp_size); I64(interp_next); I64(interp_tstate_head); I64(interp_runtime);
	I64(interp_gil_ptr); I64(interp_modules);
	I64(gil_size); I64(gil_last_holder); I64(gil_locked); I64(gil_cond); I64(gil_mutex);
	I64(tstate_size); I64(tstate_next); I64(tstate_interp); I64(tstate_frame);
	I64(tstate_cframe); I64(cframe_current_frame); I64(tstate_thread_id);
	I64(tstate_native_thread_id); I64(tstate_datastack_chunk);
	I64(frame_size); I64(frame_back); I64(frame_code); I64(frame_lasti); I64(frame_is_entry);
	I64(frame_owner); I64(frame_owned_by_cstack);
	I64(code_size); I64(code_filename); I64(code_name); I64(code_qualname);
	I64(code_firstlineno); I64(code_linetable); I64(code_code_adaptive);
	I64(object_type); I64(type_name); I64(bytes_size); I64(bytes_sval);
	I64(unicode_length); I64(unicode_state); I64(unicode_ascii_size);
	I64(unicode_compact_size);
	U64(unicode_kind_shift); U64(unicode_kind_mask); U64(unicode_compact_bit);
	U64(unicode_ascii_bit);
	U64(frame_code_tags); I64(frame_owned_by_interpreter);
	U64(remote_debug); I64(interp_threads_main); I64(interp_remote_debug_enabled);
	I64(tstate_eval_breaker); I64(tstate_remote_debugger_support);
	I64(debugger_pending_call); I64(debugger_script_path); I64(debugger_script_path_size);
#undef I64
#undef U64
}

static int
open_candidate(struct pyruntime *rt, const char *path, bool libpython,
    struct candidate *c, char **cause)
{
	char *file;
	int rc;

	memset(c, 0, sizeof *c);
	c->path = path;
	c->libpython = libpython;
	file = procfs_target_path(rt->pid, path);
	rc = elf_image_open(file, &c->img, cause);
	free(file);
	if (rc != FP_OK)
		return rc;
	if (!find_bias(&rt->maps, path, c->img, &c->bias)) {
		elf_image_close(c->img);
		c->img = NULL;
		return fail(cause, FP_ERR, "cannot tell where %s is loaded in process %d", path, (int)rt->pid);
	}
	return FP_OK;
}

int
pyruntime_open(pid_t pid, struct pyruntime **rtp, char **cause)
{
	struct pyruntime *rt;
	struct candidate c = { 0 };
	const char *paths[2] = { NULL, NULL };
	char exe[PATH_MAX], link[64];
	ssize_t n;
	size_t i, np = 0;
	int rc;

	*rtp = NULL;
	if (!procfs_exists(pid)) {
		if (pid > 0 && kill(pid, 0) == 0)
			return fail(cause, FP_EEXITED, "process %d has exited", (int)pid);
		return fail(cause, FP_ENOPROC, "no process with pid %d", (int)pid);
	}
	rt = xcalloc(1, sizeof *rt);
	rt->pid = pid;
	if ((rc = procfs_maps_read(pid, &rt->maps, cause)) != FP_OK)
		goto out;

	/* libpython first: with a shared library the runtime lives there. */
	for (i = 0; i < rt->maps.n; i++) {
		const struct proc_map *m = &rt->maps.maps[i];

		if (m->path != NULL && m->offset == 0 && is_libpython(m->path)) {
			paths[np++] = m->path;
			break;
		}
	}
	snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof exe - 1);
	if (n < 0) {
		rc = errno == EACCES || errno == EPERM ?
		    fail(cause, FP_EPERM, "cannot read process %d: permission denied", (int)pid) :
		    fail(cause, procfs_exists(pid) ? FP_ENOTPY : FP_EEXITED,
			"cannot find the executable of process %d: %s", (int)pid, strerror(errno));
		goto out;
	}
	exe[n] = '\0';
	paths[np++] = exe;

	rc = FP_ENOTPY;
	for (i = 0; i < np; i++) {
		uint32_t hex;
		char *why = NULL;

		if (open_candidate(rt, paths[i], i == 0 && np == 2, &c, &why) != FP_OK) {
			free(why);
			continue;
		}
		hex = detect_version(rt, &c);
		if (hex != 0) {
			set_version(rt, hex);
			rt->binary = xstrdup(c.path);
			rt->bias = c.bias;
			if ((rc = choose_offsets(rt, cause)) == FP_OK)
				rc = locate_runtime(rt, &c, cause);
			elf_image_close(c.img);
			goto out;
		}
		elf_image_close(c.img);
	}
	rc = fail(cause, FP_ENOTPY, "process %d (%s) is not a Python process: no libpython and no CPython runtime in its executable",
	    (int)pid, exe);
out:
	if (rc != FP_OK) {
		if (rc != FP_ENOPROC && rc != FP_EPERM && !procfs_exists(pid))
			rc = fail(cause, FP_EEXITED, "process %d exited while being read", (int)pid);
		pyruntime_close(rt);
		return rc;
	}
	if (env_is("FP_DUMP_OFFSETS", "1")) {
		char prefix[64];

		snprintf(prefix, sizeof prefix, "offsets[%d]: ", (int)pid);
		fprintf(stderr, "%sruntime = 0x%llx (%s, %s)\n", prefix,
		    (unsigned long long)rt->runtime, rt->layer, rt->binary);
		pyruntime_dump_offsets(&rt->off, stderr, prefix);
	}
	*rtp = rt;
	return FP_OK;
}

void
pyruntime_close(struct pyruntime *rt)
{
	if (rt == NULL)
		return;
	procfs_maps_free(&rt->maps);
	free(rt->binary);
	free(rt);
}
