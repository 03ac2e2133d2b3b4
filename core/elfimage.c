#include "config.h"

#include "core/elfimage.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/procfs.h"
#include "core/util.h"

#define PAGE_MASK_4K (~(uint64_t)0xfff)

struct elf_image {
	int fd;
	Elf *elf;
	bool dyn;
	struct elf_segment *segs;
	size_t nsegs, asegs;
};

int
elf_image_open(const char *path, struct elf_image **imgp, char **cause)
{
	struct elf_image *img;
	GElf_Ehdr ehdr;
	size_t phnum, i;

	*imgp = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(cause, FP_ERR, "libelf is too old");
	img = xcalloc(1, sizeof *img);
	img->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (img->fd < 0) {
		int e = errno;

		free(img);
		return fail(cause, e == EACCES ? FP_EPERM : FP_ERR,
		    "cannot open %s: %s", path, strerror(e));
	}
	img->elf = elf_begin(img->fd, ELF_C_READ_MMAP, NULL);
	if (img->elf == NULL || elf_kind(img->elf) != ELF_K_ELF ||
	    gelf_getehdr(img->elf, &ehdr) == NULL ||
	    gelf_getclass(img->elf) != ELFCLASS64 ||
	    elf_getphdrnum(img->elf, &phnum) != 0) {
		elf_image_close(img);
		return fail(cause, FP_ERR, "%s is not a 64-bit ELF file", path);
	}
	img->dyn = ehdr.e_type == ET_DYN;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		struct elf_segment *s;

		if (gelf_getphdr(img->elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
			continue;
		s = ARRAY_PUSH(img->segs, img->nsegs, img->asegs);
		s->vaddr = ph.p_vaddr;
		s->memsz = ph.p_memsz;
		s->offset = ph.p_offset;
		s->filesz = ph.p_filesz;
		s->write = (ph.p_flags & PF_W) != 0;
		s->exec = (ph.p_flags & PF_X) != 0;
	}
	*imgp = img;
	return FP_OK;
}

void
elf_image_close(struct elf_image *img)
{
	if (img == NULL)
		return;
	if (img->elf != NULL)
		elf_end(img->elf);
	if (img->fd >= 0)
		close(img->fd);
	free(img->segs);
	free(img);
}

static bool
symtab_lookup(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, const char *name,
    uint64_t *value, uint64_t *size)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, i;

	if (data == NULL || sh->sh_entsize == 0)
		return false;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *s;

		if (gelf_getsym(data, (int)i, &sym) == NULL || sym.st_shndx == SHN_UNDEF)
			continue;
		s = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (s != NULL && strcmp(s, name) == 0) {
			*value = sym.st_value;
			if (size != NULL)
				*size = sym.st_size;
			return true;
		}
	}
	return false;
}

static bool
lookup(struct elf_image *img, const unsigned *types, size_t ntypes,
    const char *name, uint64_t *value, uint64_t *size)
{
	size_t t;

	for (t = 0; t < ntypes; t++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(img->elf, scn)) != NULL) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != types[t])
				continue;
			if (symtab_lookup(img->elf, scn, &sh, name, value, size))
				return true;
		}
	}
	return false;
}

bool
elf_image_symbol(struct elf_image *img, const char *name, uint64_t *value,
    uint64_t *size)
{
	static const unsigned types[] = { SHT_DYNSYM, SHT_SYMTAB };

	return lookup(img, types, FP_NELEM(types), name, value, size);
}

bool
elf_image_dynsym(struct elf_image *img, const char *name, uint64_t *value,
    uint64_t *size)
{
	static const unsigned types[] = { SHT_DYNSYM };

	return lookup(img, types, FP_NELEM(types), name, value, size);
}

bool
elf_image_section(struct elf_image *img, const char *name, uint64_t *addr,
    uint64_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(img->elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(img->elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *s;

		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		s = elf_strptr(img->elf, shstrndx, sh.sh_name);
		if (s != NULL && strcmp(s, name) == 0) {
			*addr = sh.sh_addr;
			*size = sh.sh_size;
			return true;
		}
	}
	return false;
}

const struct elf_segment *
elf_image_segments(struct elf_image *img, size_t *n)
{
	*n = img->nsegs;
	return img->segs;
}

bool
elf_image_is_dyn(struct elf_image *img)
{
	return img->dyn;
}

bool
elf_load_bias(const struct elf_segment *first, bool dyn,
    const struct proc_map *map, uint64_t *bias)
{
	if (map->offset != (first->offset & PAGE_MASK_4K))
		return false;
	*bias = map->start - (first->vaddr & PAGE_MASK_4K);
	return dyn || *bias == 0;
}

const void *
elf_image_bytes(struct elf_image *img, uint64_t vaddr, size_t len)
{
	size_t i, size;
	const char *raw = elf_rawfile(img->elf, &size);

	if (raw == NULL)
		return NULL;
	for (i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];

		if (vaddr >= s->vaddr && vaddr + len <= s->vaddr + s->filesz &&
		    s->offset + (vaddr - s->vaddr) + len <= size)
			return raw + s->offset + (vaddr - s->vaddr);
	}
	return NULL;
}

bool
elf_image_read(struct elf_image *img, uint64_t vaddr, void *buf, size_t len)
{
	size_t i;

	for (i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];

		if (vaddr >= s->vaddr && vaddr + len <= s->vaddr + s->filesz) {
			off_t off = (off_t)(s->offset + (vaddr - s->vaddr));

			return pread(img->fd, buf, len, off) == (ssize_t)len;
		}
	}
	return false;
}
