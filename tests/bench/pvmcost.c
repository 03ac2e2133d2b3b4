/*
 * tests/bench/pvmcost.c — what process_vm_readv costs on this machine, for
 * tests/bench/sampler.sh to print next to the sampler's budget: one call
 * reading 64 bytes of one page of another process, one reading 64 bytes on
 * each of N pages (N ranges), one reading N whole pages (one range), and a
 * getppid() for the cost of a system call alone.  The kernel pins each
 * page a call touches; that, not the bytes copied, is what a call costs.
 *
 *   pvmcost [N [CALLS]]   prints one line: "1 page X us, N pages Y us
 *                         (N ranges) / Z us (1 range), +P us a page,
 *                         getppid G us"
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"

#define PAGE	4096
#define MAXN	64

/* Microseconds a call, the best of 5 rounds of `calls` (the least disturbed). */
static double
per_call(pid_t child, struct iovec *local, struct iovec *remote, unsigned long nremote,
    int calls)
{
	double best = 1e9;
	int round, i;

	for (round = 0; round < 5; round++) {
		double t0 = (double)now_ns() / 1e3, t;

		for (i = 0; i < calls; i++)
			if (process_vm_readv(child, local, 1, remote, nremote, 0) < 0) {
				perror("pvmcost: process_vm_readv");
				exit(1);
			}
		t = ((double)now_ns() / 1e3 - t0) / calls;
		if (t < best)
			best = t;
	}
	return best;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8, calls = argc > 2 ? atoi(argv[2]) : 20000, i;
	static unsigned char out[MAXN * PAGE];
	struct iovec local, remote[MAXN];
	unsigned char *mem;
	double one, ranges, whole, ppid, t0;
	pid_t child;

	if (n < 2 || n > MAXN || calls < 1) {
		fprintf(stderr, "usage: pvmcost [N (2..%d) [CALLS]]\n", MAXN);
		return 2;
	}
	mem = aligned_alloc(PAGE, MAXN * PAGE);
	if (mem == NULL)
		return 1;
	memset(mem, 1, MAXN * PAGE);	/* every page present in the child too */
	child = fork();
	if (child < 0) {
		perror("pvmcost: fork");
		return 1;
	}
	if (child == 0) {
		for (;;)
			pause();
	}
	local = (struct iovec){ out, 64 };
	remote[0] = (struct iovec){ mem + 128, 64 };
	one = per_call(child, &local, remote, 1, calls);
	for (i = 0; i < n; i++)
		remote[i] = (struct iovec){ mem + (size_t)i * PAGE + 128, 64 };
	local.iov_len = (size_t)n * 64;
	ranges = per_call(child, &local, remote, (unsigned long)n, calls);
	remote[0] = (struct iovec){ mem, (size_t)n * PAGE };
	local.iov_len = (size_t)n * PAGE;
	whole = per_call(child, &local, remote, 1, calls);
	t0 = (double)now_ns() / 1e3;
	for (i = 0; i < calls; i++)
		(void)getppid();
	ppid = ((double)now_ns() / 1e3 - t0) / calls;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("1 page %.2f us, %d pages %.2f us (%d ranges) / %.2f us (1 range), "
	    "+%.2f us a page, getppid %.2f us\n", one, n, ranges, n, whole,
	    (ranges - one) / (n - 1), ppid);
	return 0;
}
