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

#include "core/debugoffsets.h"
#include "core/elfimage.h"
#include "core/memread.h"
#include "core/util.h"

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

/* Load bias of `path`, from the first of its mappings that tells it. */
static bool
find_bias(const struct proc_maps *maps, const char *path, struct elf_image *img,
    uint64_t *bias)
{
	const struct elf_segment *segs;
	size_t nsegs, i;

	segs = elf_image_segments(img, &nsegs);
	for (i = 0; nsegs > 0 && i < maps->n; i++)
		if (maps->maps[i].path != NULL &&
		    strcmp(maps->maps[i].path, path) == 0 &&
		    elf_load_bias(&segs[0], elf_image_is_dyn(img), &maps->maps[i],
		    bias))
			return true;
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

/*
 * Python has begun to finalize (Py_FinalizeEx sets the runtime's
 * finalizing thread state): a runtime that stops validating then is a
 * program on its way out, not offsets gone wrong.
 */
static bool
runtime_finalizing(const struct pyruntime *rt)
{
	uint64_t tstate = 0;

	if (rt->off.runtime_finalizing == PYOFF_NONE)
		return false;
	return mem_read_u64(rt->pid, rt->runtime + (uint64_t)rt->off.runtime_finalizing,
	    &tstate) == 0 && tstate != 0;
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
	return avail >= 8 && memcmp(p, DEBUG_OFFSETS_COOKIE, 8) == 0;
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
	rc = debug_offsets_parse(image, sizeof image, rt->version_hex, rt->version, hdr,
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
	if (minor > DEBUG_OFFSETS_NEWEST_MINOR) {
		char prefix[32];

		snprintf(prefix, sizeof prefix, "process %d: ", (int)rt->pid);
		return debug_offsets_refuse_newer(cause, prefix, rt->version);
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
	if (!runtime_valid(rt->pid, &rt->off, rt->runtime) && runtime_finalizing(rt))
		return fail(cause, FP_EEXITED, "process %d is exiting: Python is finalizing", (int)rt->pid);
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
		/* ESRCH: no memory left to read, an exited process not yet reaped. */
		if (errno == ESRCH || !procfs_exists(rt->pid))
			return fail(cause, FP_EEXITED, "process %d exited while being read", (int)rt->pid);
		return fail(cause, FP_ERR, "process %d: cannot read the interpreter list: %s",
		    (int)rt->pid, strerror(errno));
	}
	if (*interp == 0 && runtime_finalizing(rt))
		return fail(cause, FP_EEXITED, "process %d is exiting: Python is finalizing", (int)rt->pid);
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
	I64(tstate_size); I64(tstate_prev); I64(tstate_next); I64(tstate_interp); I64(tstate_frame);
	I64(tstate_cframe); I64(cframe_current_frame); I64(cframe_previous); I64(tstate_thread_id);
	I64(tstate_native_thread_id); I64(tstate_datastack_chunk); I64(tstate_datastack_top);
	I64(frame_size); I64(frame_back); I64(frame_code); I64(frame_lasti); I64(frame_is_entry);
	I64(frame_owner); I64(frame_owned_by_cstack); I64(frame_owned_by_generator);
	I64(frame_owned_by_thread); I64(gen_frame_state); I64(gen_state_executing);
	I64(chunk_previous); I64(chunk_data); I64(chunk_size);
	I64(frame_state); I64(frame_state_running); I64(frame_state_unwinding);
	I64(code_size); I64(code_filename); I64(code_name); I64(code_qualname);
	I64(code_firstlineno); I64(code_linetable); I64(code_code_adaptive); I64(code_framesize); I64(code_flags);
	I64(code_nlocalsplus); I64(code_stacksize);
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
			return fail(cause, FP_EEXITED, "process %d exited", (int)pid);
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
