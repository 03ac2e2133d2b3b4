/*
 * pyruntime — find the CPython runtime (_PyRuntime) of a live process from
 * outside, tell its exact version and choose the struct offsets to read it.
 *
 * Layers, first that works wins: the `.PyRuntime` section, the `_PyRuntime`
 * symbol (.dynsym, then .symtab), a scan for the `xdebugpy` cookie of
 * _Py_DebugOffsets (3.13+), and a scan of the binary's writable segments
 * for a structure that validates as a runtime.  Files are opened through
 * /proc/<pid>/root so processes in containers work.  Nothing is written to
 * the target and nothing is stopped.
 *
 * FP_RUNTIME_LAYER=section|symbol|cookie|scan in the environment forces one
 * layer (for tests); FP_OFFSETS=headers|debug forces the offsets source for
 * 3.13 (3.14+ only from _Py_DebugOffsets); FP_DUMP_OFFSETS=1
 * prints the offsets in use to stderr (for tests and bug reports).
 *
 * CPython versions: 3.8–3.13 from the configured interpreters' headers
 * (3.13 also, and by default, from its _Py_DebugOffsets); 3.14 and 3.15
 * from their own _Py_DebugOffsets, written to the published layouts and
 * never run against a live 3.14 or 3.15 here; 3.16+ and free-threaded
 * builds are refused.
 */
#ifndef FP_PYRUNTIME_H
#define FP_PYRUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "core/procfs.h"
#include "core/pyoffsets.h"

struct pyruntime {
	pid_t pid;
	uint32_t version_hex;	/* 0x030C01F0; micro 0xFF when unknown */
	char version[24];	/* "3.12.1" */
	char *binary;		/* the ELF holding _PyRuntime, as the target names it */
	uint64_t bias;		/* its load bias */
	uint64_t runtime;	/* address of _PyRuntime */
	const char *layer;	/* which layer found it */
	struct py_offsets off;	/* offsets in use */
	bool offsets_exact;	/* built from this exact version's headers */
	struct proc_maps maps;	/* the maps when opened */
};

/* Returns an enum fp_status; *cause says why on failure. */
int pyruntime_open(pid_t pid, struct pyruntime **rt, char **cause);
void pyruntime_close(struct pyruntime *rt);

/* Address of the first interpreter; 0 with *cause when not initialized. */
int pyruntime_main_interp(struct pyruntime *rt, uint64_t *interp, char **cause);

/* Print every offset of *o, one "name = value" a line, after `prefix`. */
void pyruntime_dump_offsets(const struct py_offsets *o, FILE *out, const char *prefix);

#endif
