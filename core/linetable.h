/*
 * linetable — from a code object's line table and an instruction offset to
 * a line number, for each table format CPython has used:
 *   3.8–3.9  co_lnotab     (byte delta, signed line delta) pairs
 *   3.10     co_linetable  (byte length, signed line delta; -128 = none)
 *   3.11+    the location table (PEP 626/657 compact entries)
 * Pure functions on bytes already read from the target; never reads memory.
 */
#ifndef FP_LINETABLE_H
#define FP_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Line of the instruction at byte offset `addrq` from the start of the
 * bytecode (for 3.10 pass f_lasti * 2; for 3.11+ pass code units * 2).
 * Negative addrq means "before the first instruction": firstlineno.
 * Returns 0 when the instruction has no line.
 */
int linetable_line(uint32_t version_hex, const uint8_t *table, size_t len,
    int firstlineno, int64_t addrq);

#endif
