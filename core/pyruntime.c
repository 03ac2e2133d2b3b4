#include "config.h"

#include "core/pyruntime.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/elfimage.h"
#include "core/memread.h"
#include "core/util.h"

/*
 * The layout of _Py_DebugOffsets as CPython 3.13 publishes it
 * (Include/internal/pycore_runtime.h).  It changes between minor versions,
 * so each minor version gets its own description; 3.14 is not described
 * yet and is refused with a clear message.
 */
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

static const char debug_cookie[8] = { 'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y' };

/* One ELF file mapped in the target that may hold the runtime. */
struct candidate {
	const char *path;	/* as in /proc/<pid>/maps */
	struct elf_image *img;
	uint64_t bias;
	bool libpython;
};

static void
set_version(struct pyruntime *rt, uint32_t hex)
{
	unsigned micro = (hex >> 8) & 0xff;

	rt->version_hex = hex;
	if (micro == 0xff)
		snprintf(rt->version, sizeof rt->version, "%u.%u", hex >> 24,
		    (hex >> 16) & 0xff);
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
	size_t nsegs, i;
	uint32_t found = 0;

	segs = elf_image_segments(img, &nsegs);
	for (i = 0; i < nsegs && found == 0; i++) {
		size_t len = segs[i].filesz, j;
		const char *buf;

		if (segs[i].write || segs[i].exec || len == 0)
			continue;
		buf = elf_image_bytes(img, segs[i].vaddr, len);
		if (buf == NULL)
			continue;
		for (j = 1; j + 8 < len && found == 0; j++) {
			unsigned ma, mi, mc;
			char tail;
			int used = 0;

			/*
			 * The linker may share PY_VERSION with the tail of a longer
			 * string ("…/Python-3.9.18"): accept any non-version byte
			 * before it.
			 */
			if (buf[j] != '3' || buf[j + 1] != '.' || buf[j + 2] < '0' || buf[j + 2] > '9' ||
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

/* Fill rt->off from the target's _Py_DebugOffsets (3.13). */
static int
offsets_from_debug(struct pyruntime *rt, char **cause)
{
	struct debug_offsets_313 d;
	const struct py_offsets *hdr;
	struct py_offsets *o = &rt->off;
	int exact;

	if (mem_read(rt->pid, rt->runtime, &d, sizeof d) != 0)
		return fail(cause, FP_EEXITED, "cannot read _Py_DebugOffsets of process %d: %s",
		    (int)rt->pid, strerror(errno));
	if (memcmp(d.cookie, debug_cookie, 8) != 0)
		return fail(cause, FP_EVERSION, "process %d: _PyRuntime at 0x%llx has no _Py_DebugOffsets cookie",
		    (int)rt->pid, (unsigned long long)rt->runtime);
	if ((d.version >> 16) != (rt->version_hex >> 16))
		return fail(cause, FP_EVERSION, "process %d: _Py_DebugOffsets is for version 0x%llx, the binary says %s",
		    (int)rt->pid, (unsigned long long)d.version, rt->version);
	if (d.free_threaded)
		return fail(cause, FP_EVERSION, "process %d runs a free-threaded CPython %s, which flight_profiler does not read yet",
		    (int)rt->pid, rt->version);

	/*
	 * What _Py_DebugOffsets does not publish (the GIL's condition variable,
	 * the unicode state bits) comes from this minor version's headers when
	 * they were configured, else stays unknown (GIL waits are then found
	 * from native frames only) or takes the layout every version since 3.3
	 * has had (the kind/compact/ascii bits).
	 */
	hdr = py_offsets_find((uint32_t)d.version, &exact);
	memset(o, 0, sizeof *o);
	o->version_hex = (uint32_t)d.version;
	o->version = rt->version;
	o->source = "_Py_DebugOffsets";
	o->frame_model = PY_FRAMES_INTERP;

	o->runtime_size = (int64_t)d.runtime_state.size;
	o->runtime_finalizing = (int64_t)d.runtime_state.finalizing;
	o->runtime_interp_head = (int64_t)d.runtime_state.interpreters_head;
	o->runtime_tstate_current = PYOFF_NONE;
	o->runtime_gil = PYOFF_NONE;

	o->interp_size = (int64_t)d.interpreter_state.size;
	o->interp_next = (int64_t)d.interpreter_state.next;
	o->interp_tstate_head = (int64_t)d.interpreter_state.threads_head;
	o->interp_runtime = hdr ? hdr->interp_runtime : PYOFF_NONE;
	o->interp_gil_ptr = (int64_t)d.interpreter_state.ceval_gil;
	o->interp_modules = (int64_t)d.interpreter_state.imports_modules;

	o->gil_size = hdr ? hdr->gil_size : 0;
	o->gil_last_holder = (int64_t)(d.interpreter_state.gil_runtime_state_holder -
	    d.interpreter_state.gil_runtime_state);
	o->gil_locked = (int64_t)(d.interpreter_state.gil_runtime_state_locked -
	    d.interpreter_state.gil_runtime_state);
	o->gil_cond = hdr ? hdr->gil_cond : PYOFF_NONE;
	o->gil_mutex = hdr ? hdr->gil_mutex : PYOFF_NONE;

	o->tstate_size = (int64_t)d.thread_state.size;
	o->tstate_next = (int64_t)d.thread_state.next;
	o->tstate_interp = (int64_t)d.thread_state.interp;
	o->tstate_frame = (int64_t)d.thread_state.current_frame;
	o->tstate_cframe = PYOFF_NONE;
	o->cframe_current_frame = PYOFF_NONE;
	o->tstate_thread_id = (int64_t)d.thread_state.thread_id;
	o->tstate_native_thread_id = (int64_t)d.thread_state.native_thread_id;
	o->tstate_datastack_chunk = (int64_t)d.thread_state.datastack_chunk;

	o->frame_size = (int64_t)d.interpreter_frame.size;
	o->frame_back = (int64_t)d.interpreter_frame.previous;
	o->frame_code = (int64_t)d.interpreter_frame.executable;
	o->frame_lasti = (int64_t)d.interpreter_frame.instr_ptr;
	o->frame_is_entry = PYOFF_NONE;
	o->frame_owner = (int64_t)d.interpreter_frame.owner;
	/* FRAME_OWNED_BY_CSTACK: 3 in 3.12 and 3.13 (pycore_frame.h). */
	o->frame_owned_by_cstack = hdr ? hdr->frame_owned_by_cstack : 3;

	o->code_size = (int64_t)d.code_object.size;
	o->code_filename = (int64_t)d.code_object.filename;
	o->code_name = (int64_t)d.code_object.name;
	o->code_qualname = (int64_t)d.code_object.qualname;
	o->code_firstlineno = (int64_t)d.code_object.firstlineno;
	o->code_linetable = (int64_t)d.code_object.linetable;
	o->code_code_adaptive = (int64_t)d.code_object.co_code_adaptive;

	o->object_type = (int64_t)d.pyobject.ob_type;
	o->type_name = (int64_t)d.type_object.tp_name;
	o->bytes_size = (int64_t)d.bytes_object.ob_size;
	o->bytes_sval = (int64_t)d.bytes_object.ob_sval;
	o->unicode_length = (int64_t)d.unicode_object.length;
	o->unicode_state = (int64_t)d.unicode_object.state;
	o->unicode_ascii_size = (int64_t)d.unicode_object.asciiobject_size;
	o->unicode_compact_size = hdr ? hdr->unicode_compact_size :
	    (int64_t)d.unicode_object.asciiobject_size + 16;
	o->unicode_kind_shift = hdr ? hdr->unicode_kind_shift : 2;
	o->unicode_kind_mask = hdr ? hdr->unicode_kind_mask : 7;
	o->unicode_compact_bit = hdr ? hdr->unicode_compact_bit : 1u << 5;
	o->unicode_ascii_bit = hdr ? hdr->unicode_ascii_bit : 1u << 6;

	/* Every offset must fall inside its structure. */
	if (o->tstate_frame <= 0 || o->tstate_frame >= o->tstate_size ||
	    o->frame_back >= o->frame_size || o->frame_code >= o->frame_size ||
	    o->code_filename >= o->code_size || o->runtime_interp_head >= o->runtime_size ||
	    o->interp_tstate_head >= o->interp_size)
		return fail(cause, FP_EVERSION, "process %d: _Py_DebugOffsets of CPython %s does not validate",
		    (int)rt->pid, rt->version);
	rt->offsets_exact = true;
	return FP_OK;
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
	t = py_offsets_find(rt->version_hex, &exact);
	if (t == NULL && minor < 13)
		return fail(cause, FP_EVERSION,
		    "process %d runs CPython %s, but this build of flight_profiler knows only %s; "
		    "rebuild with ./configure --with-python=/path/to/python3.%u",
		    (int)rt->pid, rt->version, py_offsets_known_versions(), minor);
	if (minor > 13)
		return fail(cause, FP_EVERSION,
		    "process %d runs CPython %s: its _Py_DebugOffsets layout is not described in this build "
		    "(supported: 3.8 to 3.13; tested: %s)", (int)rt->pid, rt->version,
		    py_offsets_known_versions());
	if (t != NULL) {
		rt->off = *t;
		rt->offsets_exact = exact;
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
	bool is313 = ((rt->version_hex >> 16) & 0xff) >= 13 && (rt->version_hex >> 24) == 3;
	bool from_debug = is313 && !env_is("FP_OFFSETS", "headers");
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
