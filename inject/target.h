/*
 * inject/target.h — what the injector finds out about a target before it
 * stops any thread: its libc, loader, executable and libpython as mapped,
 * the addresses of dlopen and friends, a syscall instruction, _r_debug.
 * Internal to inject/.
 */
#ifndef FP_INJECT_TARGET_H
#define FP_INJECT_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct range {
	uint64_t start, end;
};

/* A mapped ELF file of the target. */
struct module {
	char *path;		/* as /proc/<pid>/maps says */
	uint64_t bias;		/* load address - link address */
	uint64_t lo, hi;	/* first and last byte mapped + 1 */
	struct range *text;	/* executable mappings */
	size_t ntext, atext;
	struct elf_image *img;
	char *file;		/* the file img was opened from */
};

/* Everything found out about the target before any thread is stopped. */
struct target {
	pid_t pid;
	char *exe_path;
	struct module libc, ldso, exe, libpython;
	bool have_ldso, have_exe, have_libpython;

	uint64_t dlopen, dlsym, dlerror, dlclose, errno_location;
	bool private_dlopen;	/* __libc_dlopen_mode: no dlerror */
	uint64_t syscall_insn;	/* a `syscall` instruction in libc text */
	uint64_t r_debug;	/* &_r_debug, or 0 if not found */
	/*
	 * PyThread_acquire_lock_timed() as mapped (exe or libpython), where a
	 * thread waits on a Python lock in a futex; end 0 if not found.
	 */
	struct range lock_wait;
	struct unwinder *unw;	/* NULL: stack checks skipped */
};

bool module_contains(const struct module *m, uint64_t addr);
/* Fill *tg for process `pid`; 0 or an enum fp_status, *cause says why. */
int target_open(pid_t pid, struct target *tg, char **cause);
void target_free(struct target *tg);

#endif
