/*
 * seccomp_target — a process whose seccomp filter forbids mmap (SIGSYS,
 * SECCOMP_RET_TRAP) after start-up, asleep in clock_nanosleep.  The
 * injector's first step is an mmap: it must see the SIGSYS, give up, and
 * leave the process sleeping as before.  Prints "ready", then "ok N" per
 * sleep, "SHORT ..." if a sleep was cut short.
 */
#include "config.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof filter / sizeof filter[0], filter };
	int iterations = argc > 1 ? atoi(argv[1]) : 1000000, it;
	long ms = argc > 2 ? atol(argv[2]) : 300;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", (int)getpid());
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		printf("skip: seccomp: %d\n", errno);
		return 77;
	}
	for (it = 0; it < iterations; it++) {
		uint64_t t0 = mono_ns();
		int r = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);

		t0 = mono_ns() - t0;
		if (r != 0 || t0 + 1000000 < (uint64_t)ms * 1000000u)
			printf("SHORT %d: %d after %llu ns\n", it, r,
			    (unsigned long long)t0);
		else
			printf("ok %d\n", it);
	}
	return 0;
}
