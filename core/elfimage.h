/*
 * elfimage — the few things we need from an ELF file of the target:
 * symbols (.dynsym and .symtab), sections, load segments.  Read with
 * elfutils' libelf from the file on disk, never from the target's memory.
 */
#ifndef FP_ELFIMAGE_H
#define FP_ELFIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_image;
struct proc_map;

struct elf_segment {
	uint64_t vaddr, memsz, offset, filesz;
	bool write, exec;
};

/* Open the file at `path` (already prefixed with /proc/<pid>/root). */
int elf_image_open(const char *path, struct elf_image **img, char **cause);
void elf_image_close(struct elf_image *img);

/* Value (link-time address) and size of a symbol; false if absent. */
bool elf_image_symbol(struct elf_image *img, const char *name,
    uint64_t *value, uint64_t *size);
/* The same in .dynsym only: cheap, for exported names. */
bool elf_image_dynsym(struct elf_image *img, const char *name,
    uint64_t *value, uint64_t *size);
/* Link-time address and size of a section; false if absent. */
bool elf_image_section(struct elf_image *img, const char *name,
    uint64_t *addr, uint64_t *size);
/* The PT_LOAD segments. */
const struct elf_segment *elf_image_segments(struct elf_image *img, size_t *n);
/* True for ET_DYN (PIE executables and shared libraries). */
bool elf_image_is_dyn(struct elf_image *img);
/*
 * The load bias of an ELF object (run-time address minus link-time
 * address) from `map`, a mapping of its file in /proc/<pid>/maps, and
 * `first`, its first PT_LOAD segment (program headers list them by
 * ascending p_vaddr).  ld.so, and the kernel for the executable, map the
 * file's page holding that segment's start (p_offset & ~page) at bias +
 * (p_vaddr & ~page).  False if `map` maps another part of the file, or if
 * an ET_EXEC object (`dyn` false) is not at its link-time address: then
 * it is not the object we take it for.  The only place a bias is
 * computed, from program headers on disk or read from memory.
 */
bool elf_load_bias(const struct elf_segment *first, bool dyn,
    const struct proc_map *map, uint64_t *bias);
/*
 * The file bytes backing link-time [vaddr, vaddr+len) without a copy (the
 * file is mapped); NULL if not in the file.  Valid until elf_image_close.
 */
const void *elf_image_bytes(struct elf_image *img, uint64_t vaddr, size_t len);
/* Copy file bytes backing link-time [vaddr, vaddr+len); false if not in the file. */
bool elf_image_read(struct elf_image *img, uint64_t vaddr, void *buf, size_t len);

#endif
