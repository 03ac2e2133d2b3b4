/*
 * inject/target.c — the target's own files, read before any thread is
 * stopped: which mappings are libc, the loader, the executable and
 * libpython, where dlopen, dlsym, dlerror, dlclose and errno live (their
 * default versions, from the files' dynamic symbols), a `syscall`
 * instruction to borrow, and the loader's _r_debug.
 */
#include "config.h"

#include "inject/target.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/elfimage.h"
#include "core/memread.h"
#include "core/procfs.h"
#include "core/unwind.h"
#include "core/util.h"


/* ---- symbols in the target's own files ----------------------------------- */

bool
module_contains(const struct module *m, uint64_t addr)
{
	size_t i;

	for (i = 0; i < m->ntext; i++)
		if (addr >= m->text[i].start && addr < m->text[i].end)
			return true;
	return false;
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

static bool
is_libc(const char *base)
{
	return strcmp(base, "libc.so.6") == 0 ||
	    (strncmp(base, "libc-2.", 7) == 0 && strstr(base, ".so") != NULL);
}

static bool
is_ldso(const char *base)
{
	return strncmp(base, "ld-linux", 8) == 0 ||
	    (strncmp(base, "ld-2.", 5) == 0 && strstr(base, ".so") != NULL);
}

static bool
is_libpython(const char *base)
{
	return strncmp(base, "libpython3", 10) == 0 && strstr(base, ".so") != NULL;
}

static void
module_free(struct module *m)
{
	if (m->img != NULL)
		elf_image_close(m->img);
	free(m->path);
	free(m->file);
	free(m->text);
	memset(m, 0, sizeof *m);
}

/*
 * Fill `m` from the mappings of `path` and open the very file mapped (via
 * /proc/<pid>/map_files, which survives a package upgrade that replaced
 * the file on disk; /proc/<pid>/root otherwise).
 */
static int
module_open(pid_t pid, const struct proc_maps *maps, const char *path,
    struct module *m, char **cause)
{
	const struct proc_map *first = NULL;
	const struct elf_segment *seg;
	char *file;
	size_t i, nseg;
	int rc;

	memset(m, 0, sizeof *m);
	m->path = xstrdup(path);
	m->lo = UINT64_MAX;
	for (i = 0; i < maps->n; i++) {
		const struct proc_map *pm = &maps->maps[i];

		if (pm->path == NULL || strcmp(pm->path, path) != 0)
			continue;
		if (pm->offset == 0 && (first == NULL || pm->start < first->start))
			first = pm;
		if (pm->start < m->lo)
			m->lo = pm->start;
		if (pm->end > m->hi)
			m->hi = pm->end;
		if (pm->perms[2] == 'x') {
			struct range *r = ARRAY_PUSH(m->text, m->ntext, m->atext);

			r->start = pm->start;
			r->end = pm->end;
		}
	}
	if (first == NULL)
		return fail(cause, FP_ERR, "%s is not mapped from its start in "
		    "process %d", path, (int)pid);

	file = xasprintf("/proc/%d/map_files/%llx-%llx", (int)pid,
	    (unsigned long long)first->start, (unsigned long long)first->end);
	rc = elf_image_open(file, &m->img, NULL);
	if (rc != 0) {
		free(file);
		file = procfs_target_path(pid, path);
		rc = elf_image_open(file, &m->img, cause);
		if (rc != 0) {
			free(file);
			return rc;
		}
	}
	m->file = file;
	seg = elf_image_segments(m->img, &nseg);
	if (nseg == 0 || !elf_load_bias(&seg[0], elf_image_is_dyn(m->img), first,
	    &m->bias))
		return fail(cause, FP_ERR, "cannot tell where %s is loaded in "
		    "process %d", path, (int)pid);
	return FP_OK;
}

/*
 * The address of `name` at its default version (name@@VERSION) in the
 * .dynsym of `m`; *version gets the version's name.  glibc 2.34 moved
 * dlopen and friends into libc.so.6 as dlopen@@GLIBC_2.34 and kept
 * dlopen@GLIBC_2.2.5 as a compat alias; older glibc has them in libdl.
 */
static bool
dynsym_default(const struct module *m, const char *name, uint64_t *addr,
    char *version, size_t versionlen)
{
	Elf_Data *syms = NULL, *versym = NULL, *verdef = NULL;
	size_t symstr = 0, defstr = 0, nsyms = 0, i;
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *elf;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return false;
	if ((fd = open(m->file, O_RDONLY | O_CLOEXEC)) == -1)
		return false;
	if ((elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) == NULL) {
		close(fd);
		return false;
	}
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		if (sh.sh_type == SHT_DYNSYM) {
			syms = elf_getdata(scn, NULL);
			symstr = sh.sh_link;
			nsyms = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		} else if (sh.sh_type == SHT_GNU_versym) {
			versym = elf_getdata(scn, NULL);
		} else if (sh.sh_type == SHT_GNU_verdef) {
			verdef = elf_getdata(scn, NULL);
			defstr = sh.sh_link;
		}
	}
	for (i = 0; syms != NULL && i < nsyms && !found; i++) {
		GElf_Versym vs = 0;
		GElf_Sym sym;
		const char *s;
		size_t off = 0;

		if (gelf_getsym(syms, (int)i, &sym) == NULL ||
		    sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
			continue;
		s = elf_strptr(elf, symstr, sym.st_name);
		if (s == NULL || strcmp(s, name) != 0)
			continue;
		if (versym == NULL) {
			/* Unversioned: the only definition there is. */
			snprintf(version, versionlen, "%s", "");
			*addr = m->bias + sym.st_value;
			found = true;
			break;
		}
		if (gelf_getversym(versym, (int)i, &vs) == NULL ||
		    (vs & 0x8000) != 0)
			continue;	/* hidden: a compat version */
		snprintf(version, versionlen, "%s", "?");
		while (verdef != NULL) {
			GElf_Verdef vd;
			GElf_Verdaux va;

			if (gelf_getverdef(verdef, (int)off, &vd) == NULL)
				break;
			if (vd.vd_ndx == (vs & 0x7fff) &&
			    gelf_getverdaux(verdef, (int)(off + vd.vd_aux), &va) != NULL) {
				const char *vn = elf_strptr(elf, defstr, va.vda_name);

				snprintf(version, versionlen, "%s", vn ? vn : "?");
				break;
			}
			if (vd.vd_next == 0)
				break;
			off += vd.vd_next;
		}
		*addr = m->bias + sym.st_value;
		found = true;
	}
	elf_end(elf);
	close(fd);
	return found;
}

/* Check that `len` bytes of the target at `addr` are those of the file. */
static bool
same_code(pid_t pid, const struct module *m, uint64_t addr, size_t len)
{
	unsigned char want[32], got[32];

	if (len > sizeof want)
		len = sizeof want;
	return elf_image_read(m->img, addr - m->bias, want, len) &&
	    mem_read(pid, addr, got, len) == 0 && memcmp(want, got, len) == 0;
}

/* A `syscall` (0f 05) in libc text, preferably inside syscall(3). */
static int
find_syscall_insn(pid_t pid, struct target *tg, char **cause)
{
	const struct elf_segment *seg;
	uint64_t value, size, a;
	unsigned char got[2];
	const unsigned char *p;
	size_t i, n, j;

	if (elf_image_dynsym(tg->libc.img, "syscall", &value, &size) &&
	    size > 2 && size < 4096 &&
	    (p = elf_image_bytes(tg->libc.img, value, size)) != NULL) {
		for (j = 0; j + 1 < size; j++) {
			if (p[j] == 0x0f && p[j + 1] == 0x05) {
				a = tg->libc.bias + value + j;
				if (module_contains(&tg->libc, a) &&
				    mem_read(pid, a, got, 2) == 0 &&
				    got[0] == 0x0f && got[1] == 0x05) {
					tg->syscall_insn = a;
					return FP_OK;
				}
			}
		}
	}
	seg = elf_image_segments(tg->libc.img, &n);
	for (i = 0; i < n; i++) {
		if (!seg[i].exec || (p = elf_image_bytes(tg->libc.img,
		    seg[i].vaddr, seg[i].filesz)) == NULL)
			continue;
		for (j = 0; j + 1 < seg[i].filesz; j++) {
			if (p[j] != 0x0f || p[j + 1] != 0x05)
				continue;
			a = tg->libc.bias + seg[i].vaddr + j;
			if (module_contains(&tg->libc, a) &&
			    mem_read(pid, a, got, 2) == 0 &&
			    got[0] == 0x0f && got[1] == 0x05) {
				tg->syscall_insn = a;
				return FP_OK;
			}
		}
	}
	return fail(cause, FP_ERR, "no system call instruction found in the "
	    "text of %s in process %d", tg->libc.path, (int)pid);
}

/*
 * The address of the loader's r_debug: _r_debug in ld.so, or what DT_DEBUG
 * of the executable's dynamic section points to.  0 if neither is found.
 */
static uint64_t
find_r_debug(pid_t pid, struct target *tg)
{
	uint64_t value, size, addr, d[2];
	size_t i;

	if (tg->have_ldso && elf_image_dynsym(tg->ldso.img, "_r_debug", &value,
	    &size))
		return tg->ldso.bias + value;
	if (!tg->have_exe || !elf_image_section(tg->exe.img, ".dynamic", &addr,
	    &size))
		return 0;
	for (i = 0; i < size / 16 && i < 512; i++) {
		if (mem_read(pid, tg->exe.bias + addr + 16 * i, d, sizeof d) != 0)
			return 0;
		if (d[0] == 0)	/* DT_NULL */
			return 0;
		if (d[0] == 21)	/* DT_DEBUG */
			return mem_ptr_ok(d[1], 8) ? d[1] : 0;
	}
	return 0;
}

/*
 * Where Python waits on its locks: PyThread_acquire_lock_timed, exported
 * (the extension ABI) even by a stripped executable.
 */
static void
find_lock_wait(struct target *tg)
{
	const struct module *m[2] = { &tg->libpython, &tg->exe };
	const bool have[2] = { tg->have_libpython, tg->have_exe };
	uint64_t value, size;
	size_t i;

	for (i = 0; i < 2; i++)
		if (have[i] && elf_image_dynsym(m[i]->img,
		    "PyThread_acquire_lock_timed", &value, &size) && size > 0 &&
		    value != 0) {
			tg->lock_wait.start = m[i]->bias + value;
			tg->lock_wait.end = tg->lock_wait.start + size;
			return;
		}
}

void
target_free(struct target *tg)
{
	module_free(&tg->libc);
	module_free(&tg->ldso);
	module_free(&tg->exe);
	module_free(&tg->libpython);
	unwinder_close(tg->unw);
	free(tg->exe_path);
	memset(tg, 0, sizeof *tg);
}

/* Resolve everything the injection needs in the target's own files. */
int
target_open(pid_t pid, struct target *tg, char **cause)
{
	struct proc_maps maps = { 0 };
	const char *libc = NULL, *ldso = NULL, *libpy = NULL, *libdl = NULL;
	char version[64], path[64], *exe;
	struct module dl;
	ssize_t len;
	size_t i;
	int rc;

	memset(tg, 0, sizeof *tg);
	tg->pid = pid;
	if ((rc = procfs_maps_read(pid, &maps, cause)) != 0)
		return rc;

	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	exe = xmalloc(PATH_MAX);
	len = readlink(path, exe, PATH_MAX - 1);
	exe[len > 0 ? len : 0] = '\0';
	tg->exe_path = exe;

	for (i = 0; i < maps.n; i++) {
		const char *p = maps.maps[i].path, *b;

		if (p == NULL || p[0] != '/')
			continue;
		b = base_name(p);
		if (libc == NULL && is_libc(b))
			libc = p;
		else if (ldso == NULL && is_ldso(b))
			ldso = p;
		else if (libpy == NULL && is_libpython(b))
			libpy = p;
		else if (libdl == NULL && strncmp(b, "libdl.so", 8) == 0)
			libdl = p;
	}
	if (libc == NULL) {
		rc = fail(cause, FP_ERR, "process %d has no glibc (libc.so.6) "
		    "mapped: a static or musl program cannot be injected into",
		    (int)pid);
		goto out;
	}
	if ((rc = module_open(pid, &maps, libc, &tg->libc, cause)) != 0)
		goto out;
	if (ldso != NULL && module_open(pid, &maps, ldso, &tg->ldso, NULL) == 0)
		tg->have_ldso = true;
	if (libpy != NULL &&
	    module_open(pid, &maps, libpy, &tg->libpython, NULL) == 0)
		tg->have_libpython = true;
	if (exe[0] != '\0' && module_open(pid, &maps, exe, &tg->exe, NULL) == 0)
		tg->have_exe = true;

	if (dynsym_default(&tg->libc, "dlopen", &tg->dlopen, version,
	    sizeof version)) {
		/* glibc 2.34+: dlopen@@GLIBC_2.34 and friends in libc. */
		if (!dynsym_default(&tg->libc, "dlsym", &tg->dlsym, version,
		    sizeof version) ||
		    !dynsym_default(&tg->libc, "dlerror", &tg->dlerror, version,
		    sizeof version) ||
		    !dynsym_default(&tg->libc, "dlclose", &tg->dlclose, version,
		    sizeof version)) {
			rc = fail(cause, FP_ERR, "%s has dlopen but not dlsym, "
			    "dlerror and dlclose", libc);
			goto out;
		}
	} else if (libdl != NULL &&
	    module_open(pid, &maps, libdl, &dl, NULL) == 0) {
		/* Older glibc with libdl.so.2 already loaded. */
		bool ok = dynsym_default(&dl, "dlopen", &tg->dlopen, version,
		    sizeof version) &&
		    dynsym_default(&dl, "dlsym", &tg->dlsym, version,
		    sizeof version) &&
		    dynsym_default(&dl, "dlerror", &tg->dlerror, version,
		    sizeof version) &&
		    dynsym_default(&dl, "dlclose", &tg->dlclose, version,
		    sizeof version) &&
		    same_code(pid, &dl, tg->dlopen, 16);

		module_free(&dl);
		if (!ok) {
			rc = fail(cause, FP_ERR, "cannot resolve dlopen in %s "
			    "of process %d", libdl, (int)pid);
			goto out;
		}
	} else if (dynsym_default(&tg->libc, "__libc_dlopen_mode", &tg->dlopen,
	    version, sizeof version) &&
	    dynsym_default(&tg->libc, "__libc_dlsym", &tg->dlsym, version,
	    sizeof version)) {
		/* Older glibc without libdl loaded: its private entry points. */
		tg->private_dlopen = true;
		(void)dynsym_default(&tg->libc, "__libc_dlclose", &tg->dlclose,
		    version, sizeof version);
	} else {
		rc = fail(cause, FP_ERR, "cannot find dlopen in %s of process "
		    "%d (neither dlopen@@GLIBC_2.34 nor __libc_dlopen_mode)",
		    libc, (int)pid);
		goto out;
	}
	if (!elf_image_dynsym(tg->libc.img, "__errno_location",
	    &tg->errno_location, NULL)) {
		rc = fail(cause, FP_ERR, "cannot find __errno_location in %s",
		    libc);
		goto out;
	}
	tg->errno_location += tg->libc.bias;
	/*
	 * The file we read must be the one mapped: compare the first bytes
	 * of dlopen on disk with the target's memory.
	 */
	if (!tg->private_dlopen && module_contains(&tg->libc, tg->dlopen) &&
	    !same_code(pid, &tg->libc, tg->dlopen, 16)) {
		rc = fail(cause, FP_ERR, "the code of dlopen in process %d does "
		    "not match %s on disk (replaced since the process started?)",
		    (int)pid, libc);
		goto out;
	}
	if ((rc = find_syscall_insn(pid, tg, cause)) != 0)
		goto out;
	tg->r_debug = find_r_debug(pid, tg);
	if (tg->r_debug == 0) {
		rc = fail(cause, FP_ERR, "cannot find the dynamic loader's "
		    "r_debug in process %d (no _r_debug in ld.so, no DT_DEBUG), "
		    "so it cannot be checked that no library is being loaded",
		    (int)pid);
		goto out;
	}
	find_lock_wait(tg);
	/* Without an unwinder only the instruction pointer is checked. */
	(void)unwinder_open(pid, &tg->unw, NULL);
	rc = FP_OK;
out:
	procfs_maps_free(&maps);
	if (rc != FP_OK)
		target_free(tg);
	return rc;
}

