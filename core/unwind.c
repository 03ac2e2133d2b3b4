#include "config.h"

#include "core/unwind.h"

#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <libunwind-ptrace.h>

#include "core/elfimage.h"
#include "core/memread.h"
#include "core/procfs.h"
#include "core/util.h"

/*
 * libunwind's binary search of an .eh_frame_hdr table, the one
 * _UPT_find_proc_info ends in.  Exported (libunwind-ptrace, a separate
 * library, calls it) but not declared in libunwind's public headers.
 */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t, unw_word_t,
    unw_dyn_info_t *, unw_proc_info_t *, int, void *);

#define UNWIND_MAX_FRAMES	1024
#define MEM_PAGE		4096u
#define MEM_SLOTS		512	/* 2 MiB of target memory, direct-mapped */
#define RS_CACHE_SIZE		2048	/* libunwind register-state cache entries */
#define MAPS_RELOAD_NS		50000000u	/* 50 ms */

/*
 * A page of target memory.  libunwind reads one word at a time (one per
 * byte of CFI, even), so everything it reads comes from here: a page costs
 * one process_vm_readv.  Pages of read-only mappings (code, .eh_frame) stay
 * valid for the unwinder's life; others (stacks) only for one unwind.
 */
struct mem_page {
	uint64_t addr;		/* page address; 0 when empty */
	uint64_t gen;		/* 0: read-only memory; else the unwind it belongs to */
	unsigned char data[MEM_PAGE];
};

struct umap {
	uint64_t start, end;
	bool writable;
};

/* One ELF object mapped in the target. */
struct umodule {
	char *path;		/* as /proc/<pid>/maps names it */
	const char *name;	/* its basename, inside path */
	uint64_t base, base_end;	/* mapping of file offset 0 (the ELF header) */
	uint64_t bias;		/* runtime address - p_vaddr */
	uint64_t lo, hi;	/* span of its PT_LOAD segments; 0, 0 once unmapped */
	uint64_t eh_hdr;	/* runtime address of .eh_frame_hdr, 0 if none */
	int di_state;		/* 0 not read yet, 1 di is valid, -1 no table */
	unw_dyn_info_t di;
	int dw_state;		/* 0 not reported to libdwfl yet, 1 dwmod valid, -1 failed */
	Dwfl_Module *dwmod;
	int aranges;		/* 0 not looked at, 1 has .debug_aranges, -1 not */
};

/* A symbolized pc, cached. */
struct usym {
	uint64_t key;		/* pc << 1 | adjusted; 0 when empty */
	char *function;
	uint64_t offset;
	const char *module;	/* a umodule's name: lives as long as the unwinder */
	char *file;
	int line;
	bool is_eval;
};

struct unwinder {
	pid_t pid;
	struct umap *maps;	/* sorted, as /proc/<pid>/maps lists them */
	size_t nmaps, amaps;
	struct umodule *mods;	/* sorted by lo */
	size_t nmods, amods;
	Dwfl *dwfl;
	unw_addr_space_t as;
	struct mem_page *pages;
	uint64_t gen;		/* counts unwinds */
	struct usym *syms;	/* open addressing, nsyms <= asyms / 2 */
	size_t nsyms, asyms;
	uint64_t loaded_ns;	/* when the maps were read */

	/* The thread being unwound. */
	pid_t tid;
	void *upt;
	struct user_regs_struct regs;
};

/*
 * libunwind's accessors get the _UPT_ argument (so that the _UPT_ ones we
 * fall back to work unchanged); ours find the unwinder here.  Set only
 * while unwinder_thread() runs.
 */
static __thread struct unwinder *current;

static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* ---- target memory ---------------------------------------------------- */

static const struct umap *
map_find(const struct unwinder *u, uint64_t addr)
{
	size_t lo = 0, hi = u->nmaps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (addr < u->maps[mid].start)
			hi = mid;
		else if (addr >= u->maps[mid].end)
			lo = mid + 1;
		else
			return &u->maps[mid];
	}
	return NULL;
}

static struct mem_page *
page_get(struct unwinder *u, uint64_t page)
{
	struct mem_page *p;
	const struct umap *m;

	p = &u->pages[((page / MEM_PAGE) * 0x9e3779b97f4a7c15ull >> 32) % MEM_SLOTS];
	if (p->addr == page && (p->gen == 0 || p->gen == u->gen))
		return p;
	if (mem_read(u->pid, page, p->data, MEM_PAGE) != 0) {
		p->addr = 0;
		return NULL;
	}
	m = map_find(u, page);
	p->addr = page;
	p->gen = m != NULL && !m->writable ? 0 : u->gen;
	return p;
}

static int
mem_cached_read(struct unwinder *u, uint64_t addr, void *buf, size_t len)
{
	unsigned char *out = buf;
	struct mem_page *p;
	uint64_t page;
	size_t off, chunk;

	while (len > 0) {
		page = addr & ~(uint64_t)(MEM_PAGE - 1);
		off = addr - page;
		chunk = MEM_PAGE - off < len ? MEM_PAGE - off : len;
		if ((p = page_get(u, page)) == NULL)
			return mem_read(u->pid, addr, out, len);
		memcpy(out, p->data + off, chunk);
		out += chunk;
		addr += chunk;
		len -= chunk;
	}
	return 0;
}

static void
syms_clear(struct unwinder *u)
{
	size_t i;

	for (i = 0; i < u->asyms; i++) {
		free(u->syms[i].function);
		free(u->syms[i].file);
	}
	free(u->syms);
	u->syms = NULL;
	u->nsyms = u->asyms = 0;
}

/* ---- modules -------------------------------------------------------------- */

static int
module_cmp(const void *a, const void *b)
{
	const struct umodule *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static struct umodule *
module_find(struct unwinder *u, uint64_t pc)
{
	size_t lo = 0, hi = u->nmods, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pc < u->mods[mid].lo)
			hi = mid;
		else if (pc >= u->mods[mid].hi)
			lo = mid + 1;
		else
			return &u->mods[mid];
	}
	return NULL;
}

static bool
is_module_path(const char *path)
{
	return path != NULL && (path[0] == '/' || strcmp(path, "[vdso]") == 0);
}

/*
 * Read the ELF header and program headers that the mapping of file offset
 * 0 at `m->start` holds, and add the module.  Its load bias, span and
 * .eh_frame_hdr come from memory, so they are right even when the file has
 * been replaced on disk since it was loaded.
 */
static void
module_probe(struct unwinder *u, const struct proc_maps *pm, size_t i)
{
	const struct proc_map *base = &pm->maps[i];
	struct elf_segment first = { 0 };
	Elf64_Phdr ph[64];
	Elf64_Ehdr eh;
	struct umodule *m;
	uint64_t lo = UINT64_MAX, hi = 0, bias = 0, eh_hdr = 0;
	bool exec = false;
	size_t k;
	int j;

	if (mem_read(u->pid, base->start, &eh, sizeof eh) != 0 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) ||
	    eh.e_phentsize != sizeof ph[0] || eh.e_phnum == 0 ||
	    eh.e_phnum > FP_NELEM(ph) ||
	    mem_read(u->pid, base->start + eh.e_phoff, ph, eh.e_phnum * sizeof ph[0]) != 0)
		return;
	for (j = 0; j < eh.e_phnum; j++) {
		if (ph[j].p_type == PT_GNU_EH_FRAME)
			eh_hdr = ph[j].p_vaddr;
		if (ph[j].p_type != PT_LOAD)
			continue;
		if (lo == UINT64_MAX) {
			first.vaddr = ph[j].p_vaddr;
			first.offset = ph[j].p_offset;
		}
		if (ph[j].p_vaddr < lo)
			lo = ph[j].p_vaddr;
		if (ph[j].p_vaddr + ph[j].p_memsz > hi)
			hi = ph[j].p_vaddr + ph[j].p_memsz;
	}
	if (hi <= lo || !elf_load_bias(&first, eh.e_type == ET_DYN, base, &bias))
		return;
	lo += bias;
	hi += bias;

	/* Only objects with code mapped: not ELF files mmap'd as data. */
	for (k = i; k < pm->n && pm->maps[k].start < hi; k++)
		if (pm->maps[k].path != NULL && strcmp(pm->maps[k].path, base->path) == 0 &&
		    pm->maps[k].perms[2] == 'x')
			exec = true;
	if (!exec)
		return;

	m = ARRAY_PUSH(u->mods, u->nmods, u->amods);
	memset(m, 0, sizeof *m);
	m->path = xstrdup(base->path);
	m->name = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;
	m->base = base->start;
	m->base_end = base->end;
	m->bias = bias;
	m->lo = lo;
	m->hi = hi;
	m->eh_hdr = eh_hdr ? eh_hdr + bias : 0;
}

static bool
module_known(const struct unwinder *u, const struct proc_map *pm)
{
	size_t i;

	for (i = 0; i < u->nmods; i++)
		if (u->mods[i].base == pm->start && u->mods[i].hi != 0 &&
		    strcmp(u->mods[i].path, pm->path) == 0)
			return true;
	return false;
}

/*
 * (Re)read /proc/<pid>/maps: the mappings, and the modules not known yet.
 * Modules no longer mapped are kept (their names may be cached) but emptied.
 */
static int
maps_load(struct unwinder *u, char **cause)
{
	struct proc_maps pm;
	struct umap *um;
	size_t i, j;
	int rc;

	if ((rc = procfs_maps_read(u->pid, &pm, cause)) != 0)
		return rc;
	u->nmaps = 0;
	for (i = 0; i < pm.n; i++) {
		um = ARRAY_PUSH(u->maps, u->nmaps, u->amaps);
		um->start = pm.maps[i].start;
		um->end = pm.maps[i].end;
		um->writable = pm.maps[i].perms[1] == 'w';
	}
	for (j = 0; j < u->nmods; j++) {
		for (i = 0; i < pm.n; i++)
			if (pm.maps[i].start == u->mods[j].base && pm.maps[i].offset == 0 &&
			    pm.maps[i].path != NULL && strcmp(pm.maps[i].path, u->mods[j].path) == 0)
				break;
		if (i == pm.n && u->mods[j].hi != 0) {
			/* Unloaded: its addresses may belong to another now. */
			u->mods[j].lo = u->mods[j].hi = 0;
			syms_clear(u);
		}
	}
	for (i = 0; i < pm.n; i++)
		if (pm.maps[i].offset == 0 && pm.maps[i].perms[0] == 'r' &&
		    is_module_path(pm.maps[i].path) && !module_known(u, &pm.maps[i]))
			module_probe(u, &pm, i);
	procfs_maps_free(&pm);
	u->loaded_ns = now_ns();
	if (u->nmods > 0)
		qsort(u->mods, u->nmods, sizeof *u->mods, module_cmp);
	return 0;
}

/*
 * The module holding pc.  A pc in no mapping we know means something was
 * mapped since we read the maps (dlopen): read them again, but not more
 * often than every MAPS_RELOAD_NS, as a bad unwind can give any pc.
 */
static struct umodule *
module_for_pc(struct unwinder *u, uint64_t pc)
{
	struct umodule *m = module_find(u, pc);
	char *cause = NULL;

	if (m != NULL || map_find(u, pc) != NULL ||
	    now_ns() - u->loaded_ns < MAPS_RELOAD_NS)
		return m;
	if (maps_load(u, &cause) != 0) {
		free(cause);
		return NULL;
	}
	/* Mappings may have been reused: drop what we kept of them. */
	memset(u->pages, 0, MEM_SLOTS * sizeof *u->pages);
	unw_flush_cache(u->as, 0, 0);
	return module_find(u, pc);
}

/* Size in bytes of a DW_EH_PE-encoded value; 0 when not supported. */
static size_t
eh_pe_size(unsigned char enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	}
	return 0;
}

/* Build libunwind's view of a module's .eh_frame_hdr search table. */
static bool
module_table(struct unwinder *u, struct umodule *m)
{
	unsigned char hdr[4];
	uint64_t at, count = 0;
	size_t size;

	if (m->di_state != 0)
		return m->di_state > 0;
	m->di_state = -1;
	if (m->eh_hdr == 0 || mem_cached_read(u, m->eh_hdr, hdr, sizeof hdr) != 0)
		return false;
	/* version 1, and the binary search table we know how to read */
	if (hdr[0] != 1 || hdr[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) ||
	    hdr[1] == DW_EH_PE_omit || (size = eh_pe_size(hdr[1])) == 0)
		return false;
	at = m->eh_hdr + 4 + size;
	if ((hdr[2] & 0x70) != 0 || (size = eh_pe_size(hdr[2])) == 0 ||
	    mem_cached_read(u, at, &count, size) != 0 || count == 0)
		return false;
	at += size;

	memset(&m->di, 0, sizeof m->di);
	m->di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	m->di.start_ip = m->lo;
	m->di.end_ip = m->hi;
	m->di.u.rti.segbase = m->eh_hdr;
	/* in words, as libunwind-ptrace gives it: two int32 per entry */
	m->di.u.rti.table_len = count * 8 / sizeof(unw_word_t);
	m->di.u.rti.table_data = at;
	m->di_state = 1;
	return true;
}

/* A descriptor of the module's file as the target sees it; -1 if none. */
static int
module_open(struct unwinder *u, const struct umodule *m)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(m->path);
	char *path, buf[64];
	int fd;

	if (strcmp(m->path, "[vdso]") == 0) {
		/* No file: hand libdwfl a copy of the image. */
		size_t size = m->base_end - m->base;
		void *image;

		if (size == 0 || size > (1u << 20))
			return -1;
		image = xmalloc(size);
		fd = memfd_create("vdso", MFD_CLOEXEC);
		if (fd >= 0 && (mem_read(u->pid, m->base, image, size) != 0 ||
		    write(fd, image, size) != (ssize_t)size)) {
			close(fd);
			fd = -1;
		}
		free(image);
		return fd;
	}
	if (len > sizeof deleted - 1 &&
	    strcmp(m->path + len - (sizeof deleted - 1), deleted) == 0) {
		/* Replaced on disk since: only the mapping has the right file. */
		snprintf(buf, sizeof buf, "/proc/%d/map_files/%llx-%llx",
		    (int)u->pid, (unsigned long long)m->base,
		    (unsigned long long)m->base_end);
		return open(buf, O_RDONLY | O_CLOEXEC);
	}
	path = procfs_target_path(u->pid, m->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	return fd;
}

/* The module, reported to libdwfl the first time it is asked for. */
static Dwfl_Module *
module_dwfl(struct unwinder *u, struct umodule *m)
{
	Dwfl_Module *dm;
	GElf_Addr bias;
	char *file;
	int fd;

	if (m->dw_state != 0)
		return m->dwmod;
	m->dw_state = -1;
	if ((fd = module_open(u, m)) < 0)
		return NULL;
	file = m->path[0] == '/' ? procfs_target_path(u->pid, m->path) :
	    xstrdup(m->path);
	dwfl_report_begin_add(u->dwfl);
	/* On success libdwfl owns fd. */
	dm = dwfl_report_elf(u->dwfl, m->path, file, fd, m->bias, true);
	if (dm == NULL)
		close(fd);
	dwfl_report_end(u->dwfl, NULL, NULL);
	free(file);
	/* A file that does not match the image in memory is of no use. */
	if (dm == NULL || dwfl_module_getelf(dm, &bias) == NULL || bias != m->bias)
		return NULL;
	m->dwmod = dm;
	m->dw_state = 1;
	return dm;
}

/* ---- libunwind accessors ---------------------------------------------- */

static int
acc_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
    int need_unwind_info, void *arg)
{
	struct unwinder *u = current;
	struct umodule *m = module_for_pc(u, ip);

	if (m == NULL)
		return -UNW_ENOINFO;	/* JIT or anonymous code */
	if (module_table(u, m))
		return _Ux86_64_dwarf_search_unwind_table(as, ip, &m->di, pi,
		    need_unwind_info, arg);
	/*
	 * No usable .eh_frame_hdr: libunwind-ptrace may find .debug_frame in
	 * the file (by its path as we see it, so not in a container).
	 */
	return _UPT_find_proc_info(as, ip, pi, need_unwind_info, arg);
}

static int
acc_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val,
    int write, void *arg)
{
	if (!write && mem_cached_read(current, addr, val, sizeof *val) == 0)
		return 0;
	return _UPT_access_mem(as, addr, val, write, arg);
}

static int
acc_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val,
    int write, void *arg)
{
	const struct user_regs_struct *r = &current->regs;

	if (write)
		return _UPT_access_reg(as, reg, val, write, arg);
	switch (reg) {
	case UNW_X86_64_RAX: *val = r->rax; break;
	case UNW_X86_64_RDX: *val = r->rdx; break;
	case UNW_X86_64_RCX: *val = r->rcx; break;
	case UNW_X86_64_RBX: *val = r->rbx; break;
	case UNW_X86_64_RSI: *val = r->rsi; break;
	case UNW_X86_64_RDI: *val = r->rdi; break;
	case UNW_X86_64_RBP: *val = r->rbp; break;
	case UNW_X86_64_RSP: *val = r->rsp; break;
	case UNW_X86_64_R8: *val = r->r8; break;
	case UNW_X86_64_R9: *val = r->r9; break;
	case UNW_X86_64_R10: *val = r->r10; break;
	case UNW_X86_64_R11: *val = r->r11; break;
	case UNW_X86_64_R12: *val = r->r12; break;
	case UNW_X86_64_R13: *val = r->r13; break;
	case UNW_X86_64_R14: *val = r->r14; break;
	case UNW_X86_64_R15: *val = r->r15; break;
	case UNW_X86_64_RIP: *val = r->rip; break;
	default:
		return _UPT_access_reg(as, reg, val, write, arg);
	}
	return 0;
}

/* ---- symbols ------------------------------------------------------------ */

/*
 * The evaluation loop is _PyEval_EvalFrameDefault since 3.6 (PEP 523), with
 * a "_PyEval_EvalFrameDefault.cold" part when GCC splits it; before 3.6 (and
 * in 2.7) it was PyEval_EvalFrameEx.
 */
static bool
is_eval_function(const char *name)
{
	return name != NULL &&
	    (strncmp(name, "_PyEval_EvalFrameDefault", 24) == 0 ||
	    strcmp(name, "PyEval_EvalFrameEx") == 0);
}

static uint64_t
sym_hash(uint64_t key)
{
	return (key * 0x9e3779b97f4a7c15ull) >> 20;
}

static void
sym_insert(struct unwinder *u, const struct usym *s)
{
	size_t i, mask;

	if ((u->nsyms + 1) * 2 > u->asyms) {
		struct usym *old = u->syms;
		size_t n = u->asyms;

		u->asyms = n ? n * 2 : 512;
		u->syms = xcalloc(u->asyms, sizeof *u->syms);
		u->nsyms = 0;
		for (i = 0; i < n; i++)
			if (old[i].key != 0)
				sym_insert(u, &old[i]);
		free(old);
	}
	mask = u->asyms - 1;
	for (i = sym_hash(s->key) & mask; u->syms[i].key != 0; i = (i + 1) & mask)
		continue;
	u->syms[i] = *s;
	u->nsyms++;
}

/*
 * The line of addr when dwfl_module_getsrc() has none: it finds the CU
 * through .debug_aranges, which clang does not emit and libdw 0.188 does
 * not make up, so look at every CU instead (once per pc: it is cached).
 */
static Dwarf_Line *
module_scan_line(struct umodule *m, uint64_t addr)
{
	Dwarf_Aranges *ar;
	Dwarf_Addr bias;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf *dw;
	size_t n;

	if (m->aranges > 0 || (dw = dwfl_module_getdwarf(m->dwmod, &bias)) == NULL)
		return NULL;
	if (m->aranges == 0) {
		m->aranges = dwarf_getaranges(dw, &ar, &n) == 0 && n > 0 ? 1 : -1;
		if (m->aranges > 0)
			return NULL;
	}
	while (dwarf_get_units(dw, cu, &cu, NULL, NULL, &cudie, NULL) == 0)
		if (dwarf_haspc(&cudie, addr - bias) == 1)
			return dwarf_getsrc_die(&cudie, addr - bias);
	return NULL;
}

/*
 * Name, file and line of pc.  A return address (`adjust`) is looked up at
 * pc - 1: the call, not whatever follows it (which may be another line, or
 * another function after a call that does not return).
 */
static void
symbolize(struct unwinder *u, uint64_t pc, bool adjust, struct native_frame *f)
{
	uint64_t key = pc << 1 | adjust, addr = adjust ? pc - 1 : pc;
	struct usym s = { 0 };
	struct umodule *m;
	Dwfl_Module *dm;
	size_t i, mask;

	f->pc = pc;
	if (u->asyms > 0) {
		mask = u->asyms - 1;
		for (i = sym_hash(key) & mask; u->syms[i].key != 0; i = (i + 1) & mask)
			if (u->syms[i].key == key)
				goto found;
	}

	if ((m = module_for_pc(u, addr)) == NULL)
		return;		/* not cached: the maps may know it next time */
	s.key = key;
	s.module = m->name;
	if ((dm = module_dwfl(u, m)) != NULL) {
		GElf_Off off;
		GElf_Sym sym;
		Dwfl_Line *line;
		Dwarf_Line *dline;
		const char *name, *file;
		int lineno = 0;

		name = dwfl_module_addrinfo(dm, addr, &off, &sym, NULL, NULL, NULL);
		if (name != NULL) {
			/* glibc's .symtab says clock_nanosleep@GLIBC_2.2.5 */
			const char *at = strchr(name, '@');

			s.function = at != NULL && at != name ?
			    xstrndup(name, (size_t)(at - name)) : xstrdup(name);
			s.offset = off + (pc - addr);
			s.is_eval = is_eval_function(name);
		}
		if ((line = dwfl_module_getsrc(dm, addr)) != NULL) {
			file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		} else if ((dline = module_scan_line(m, addr)) != NULL) {
			file = dwarf_linesrc(dline, NULL, NULL);
			dwarf_lineno(dline, &lineno);
		} else
			file = NULL;
		if (file != NULL) {
			s.file = xstrdup(file);
			s.line = lineno;
		}
	}
	sym_insert(u, &s);
	mask = u->asyms - 1;
	for (i = sym_hash(key) & mask; u->syms[i].key != key; i = (i + 1) & mask)
		continue;
found:
	f->function = u->syms[i].function ? xstrdup(u->syms[i].function) : NULL;
	f->offset = u->syms[i].offset;
	f->module = xstrdup(u->syms[i].module);
	f->file = u->syms[i].file ? xstrdup(u->syms[i].file) : NULL;
	f->line = u->syms[i].line;
	f->is_eval = u->syms[i].is_eval;
}

/* ---- public --------------------------------------------------------------- */

int
unwinder_open(pid_t pid, struct unwinder **up, char **cause)
{
	struct unwinder *u;
	unw_accessors_t acc;
	int rc;

	*up = NULL;
	/*
	 * Symbolization must never reach the network: libdw would ask the
	 * debuginfod servers named here for every module, and wait.
	 */
	unsetenv("DEBUGINFOD_URLS");
	u = xcalloc(1, sizeof *u);
	u->pid = pid;
	if ((rc = maps_load(u, cause)) != 0) {
		unwinder_close(u);
		return rc;
	}
	if ((u->dwfl = dwfl_begin(&dwfl_callbacks)) == NULL) {
		rc = fail(cause, FP_ERR, "cannot start libdwfl: %s",
		    dwfl_errmsg(-1));
		unwinder_close(u);
		return rc;
	}
	/* _UPT_accessors with faster memory, registers and unwind tables. */
	acc = _UPT_accessors;
	acc.find_proc_info = acc_find_proc_info;
	acc.access_mem = acc_access_mem;
	acc.access_reg = acc_access_reg;
	if ((u->as = unw_create_addr_space(&acc, 0)) == NULL) {
		unwinder_close(u);
		return fail(cause, FP_ERR, "cannot create a libunwind address space");
	}
	unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
	unw_set_cache_size(u->as, RS_CACHE_SIZE, 0);
	u->pages = xcalloc(MEM_SLOTS, sizeof *u->pages);
	*up = u;
	return FP_OK;
}

/*
 * Unwind from u->regs with thread `tid`'s memory.  *frames gets pc and
 * exact of each frame (NULL and 0 when the unwind could not start).
 */
static int
unwind_regs(struct unwinder *u, pid_t tid, struct native_frame **framesp,
    size_t *np)
{
	struct native_frame *frames = NULL, *f;
	size_t n = 0, alloc = 0;
	unw_cursor_t cursor;
	unw_word_t pc, sp, prev_pc = 0, prev_sp = 0;
	bool next_exact = true;
	int ret;

	if ((u->upt = _UPT_create(tid)) == NULL)
		return -UNW_ENOMEM;
	u->tid = tid;
	u->gen++;
	current = u;
	if ((ret = unw_init_remote(&cursor, u->as, u->upt)) < 0)
		goto out;
	while (n < UNWIND_MAX_FRAMES) {
		if (unw_get_reg(&cursor, UNW_REG_IP, &pc) < 0 ||
		    unw_get_reg(&cursor, UNW_REG_SP, &sp) < 0 || pc == 0)
			break;
		if (n > 0 && pc == prev_pc && sp == prev_sp)
			break;	/* no progress: bad unwind info */
		f = ARRAY_PUSH(frames, n, alloc);
		memset(f, 0, sizeof *f);
		f->pc = pc;
		f->exact = next_exact;
		/* The frame a signal interrupted has an exact pc too. */
		next_exact = unw_is_signal_frame(&cursor) > 0;
		prev_pc = pc;
		prev_sp = sp;
		if (unw_step(&cursor) <= 0)
			break;
	}
	ret = 0;
out:
	current = NULL;
	_UPT_destroy(u->upt);
	u->upt = NULL;
	*framesp = frames;
	*np = n;
	return ret;
}

int
unwinder_thread_pcs(struct unwinder *u, pid_t tid, struct native_frame **framesp,
    size_t *np, char **cause)
{
	char path[64];
	int ret, e;

	*framesp = NULL;
	*np = 0;
	/* The registers once: every accessor call below reads this copy. */
	if (ptrace(PTRACE_GETREGS, tid, NULL, &u->regs) == -1) {
		e = errno;
		if (e == ESRCH && !procfs_exists(tid))
			return fail(cause, FP_EEXITED, "thread %d has exited", (int)tid);
		if (e == ESRCH)
			return fail(cause, FP_ERR, "thread %d is not stopped by us "
			    "(stop it with tstop_stop() first)", (int)tid);
		return fail(cause, FP_ERR, "cannot read the registers of thread "
		    "%d: %s", (int)tid, strerror(e));
	}
	/* Its registers with the memory of another process would be nonsense. */
	snprintf(path, sizeof path, "/proc/%d/task/%d", (int)u->pid, (int)tid);
	if (access(path, F_OK) != 0)
		return fail(cause, procfs_exists(tid) ? FP_ERR : FP_EEXITED,
		    "thread %d is not a thread of process %d", (int)tid, (int)u->pid);
	if ((ret = unwind_regs(u, tid, framesp, np)) < 0)
		return fail(cause, FP_ERR, "cannot unwind thread %d: %s", (int)tid,
		    unw_strerror(ret));
	return FP_OK;
}

void
unwinder_warm(struct unwinder *u, pid_t tid)
{
	struct native_frame *frames;
	unsigned long long sp, pc;
	char path[80], buf[256];
	size_t n;
	ssize_t len;
	int fd;

	/* "NR ARG0 .. ARG5 SP PC" of a thread blocked in a system call. */
	snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)u->pid,
	    (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	len = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (len <= 0)
		return;
	buf[len] = '\0';
	if (sscanf(buf, "%*d %*x %*x %*x %*x %*x %*x 0x%llx 0x%llx", &sp,
	    &pc) != 2)
		return;	/* "running" */
	/*
	 * Most frames find their CFA from the stack pointer and restore
	 * callee-saved registers from the stack, so pc and sp alone walk
	 * much of the real stack (racily: the thread runs; only the caches
	 * are kept).  A register we do not know reads as 0.
	 */
	memset(&u->regs, 0, sizeof u->regs);
	u->regs.rip = pc;
	u->regs.rsp = sp;
	if (unwind_regs(u, tid, &frames, &n) == 0)
		native_frames_free(frames, n);
}

void
unwinder_symbolize(struct unwinder *u, struct native_frame *frames, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		symbolize(u, frames[i].pc, !frames[i].exact, &frames[i]);
}

int
unwinder_thread(struct unwinder *u, pid_t tid, struct native_frame **framesp,
    size_t *np, char **cause)
{
	int rc;

	if ((rc = unwinder_thread_pcs(u, tid, framesp, np, cause)) == FP_OK)
		unwinder_symbolize(u, *framesp, *np);
	return rc;
}

void
unwinder_close(struct unwinder *u)
{
	size_t i;

	if (u == NULL)
		return;
	if (u->as != NULL)
		unw_destroy_addr_space(u->as);
	if (u->dwfl != NULL)
		dwfl_end(u->dwfl);
	syms_clear(u);
	for (i = 0; i < u->nmods; i++)
		free(u->mods[i].path);
	free(u->mods);
	free(u->maps);
	free(u->pages);
	free(u);
}

void
native_frames_free(struct native_frame *frames, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(frames[i].function);
		free(frames[i].module);
		free(frames[i].file);
	}
	free(frames);
}
