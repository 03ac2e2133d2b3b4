/*
 * loader — the injectors of inject/ as core/attach's struct attach_loader:
 * PEP 768 (3.14+) first where it applies, the ptrace injector otherwise.
 * The program's main hands it to attach_set_loader() once; nothing in
 * core/ names inject/ (DESIGN.md §1: inject uses core, never the reverse).
 */
#ifndef FP_LOADER_H
#define FP_LOADER_H

#include "core/attach.h"

extern const struct attach_loader inject_loader;

#endif
