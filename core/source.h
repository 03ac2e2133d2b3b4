/*
 * source — lines of the target's source files, read through
 * /proc/<pid>/root (so a process in a container shows its own files) and
 * relative names resolved against the target's cwd.  Files are cached;
 * files over 16 MiB or that are not text are not read.
 */
#ifndef FP_SOURCE_H
#define FP_SOURCE_H

#include <sys/types.h>

struct source_cache;

struct source_cache *source_cache_new(pid_t pid);
void source_cache_free(struct source_cache *sc);

/*
 * Line `line` (1-based) of `filename`, without its newline, or NULL.
 * The string belongs to the cache.
 */
const char *source_line(struct source_cache *sc, const char *filename, int line);
/* Number of lines of the file, 0 if unreadable. */
int source_nlines(struct source_cache *sc, const char *filename);

#endif
