/*
 * xstate_target — a process whose registers must survive an injection.
 *
 * Each iteration loads distinctive values into ymm0-15 (and zmm16-31 when
 * the CPU has AVX-512) and a non-default MXCSR, sleeps in clock_nanosleep
 * through a raw `syscall` in the same asm statement (so nothing of ours
 * runs between the load and the check), stores the registers back and
 * compares.  A thread hijacked during the sleep runs dlopen, whose string
 * functions use those very registers: an injector that does not restore
 * the whole XSAVE area, or that breaks the restart of the interrupted
 * sleep, is caught here.  Prints "ready", then per iteration "ok N" or
 * "CORRUPT ..." / "SHORT ...".
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LDY(i) "vmovdqu " #i "*32(%[in]), %%ymm" #i "\n\t"
#define STY(i) "vmovdqu %%ymm" #i ", " #i "*32(%[out])\n\t"
#define LDZ(i) "vmovdqu64 512+(" #i "-16)*64(%[in]), %%zmm" #i "\n\t"
#define STZ(i) "vmovdqu64 %%zmm" #i ", 512+(" #i "-16)*64(%[out])\n\t"

#define SLEEP_SYSCALL \
	"mov $230, %%eax\n\t"		/* clock_nanosleep */ \
	"mov $1, %%edi\n\t"		/* CLOCK_MONOTONIC */ \
	"xor %%esi, %%esi\n\t"		/* relative */ \
	"mov %[ts], %%rdx\n\t" \
	"xor %%r10d, %%r10d\n\t" \
	"syscall\n\t" \
	"mov %%rax, %[ret]\n\t"

#define CLOBBERS "rax", "rdi", "rsi", "rdx", "r10", "rcx", "r11", "memory", \
	"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", \
	"xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

#define AREA (512 + 16 * 64)

static long
sleep_avx(const struct timespec *ts, const uint8_t *in, uint8_t *out,
    uint32_t mx, uint32_t *mxout)
{
	long ret;

	__asm__ volatile(
	    "ldmxcsr %[mx]\n\t"
	    LDY(0) LDY(1) LDY(2) LDY(3) LDY(4) LDY(5) LDY(6) LDY(7)
	    LDY(8) LDY(9) LDY(10) LDY(11) LDY(12) LDY(13) LDY(14) LDY(15)
	    SLEEP_SYSCALL
	    STY(0) STY(1) STY(2) STY(3) STY(4) STY(5) STY(6) STY(7)
	    STY(8) STY(9) STY(10) STY(11) STY(12) STY(13) STY(14) STY(15)
	    "stmxcsr %[mxo]\n\t"
	    "vzeroupper\n\t"
	    : [ret] "=&r" (ret), [mxo] "=m" (*mxout)
	    : [in] "r" (in), [out] "r" (out), [ts] "r" (ts), [mx] "m" (mx)
	    : CLOBBERS);
	return ret;
}

static long
sleep_avx512(const struct timespec *ts, const uint8_t *in, uint8_t *out,
    uint32_t mx, uint32_t *mxout)
{
	long ret;

	__asm__ volatile(
	    "ldmxcsr %[mx]\n\t"
	    LDY(0) LDY(1) LDY(2) LDY(3) LDY(4) LDY(5) LDY(6) LDY(7)
	    LDY(8) LDY(9) LDY(10) LDY(11) LDY(12) LDY(13) LDY(14) LDY(15)
	    LDZ(16) LDZ(17) LDZ(18) LDZ(19) LDZ(20) LDZ(21) LDZ(22) LDZ(23)
	    LDZ(24) LDZ(25) LDZ(26) LDZ(27) LDZ(28) LDZ(29) LDZ(30) LDZ(31)
	    SLEEP_SYSCALL
	    STY(0) STY(1) STY(2) STY(3) STY(4) STY(5) STY(6) STY(7)
	    STY(8) STY(9) STY(10) STY(11) STY(12) STY(13) STY(14) STY(15)
	    STZ(16) STZ(17) STZ(18) STZ(19) STZ(20) STZ(21) STZ(22) STZ(23)
	    STZ(24) STZ(25) STZ(26) STZ(27) STZ(28) STZ(29) STZ(30) STZ(31)
	    "stmxcsr %[mxo]\n\t"
	    "vzeroupper\n\t"
	    : [ret] "=&r" (ret), [mxo] "=m" (*mxout)
	    : [in] "r" (in), [out] "r" (out), [ts] "r" (ts), [mx] "m" (mx)
	    : CLOBBERS);
	return ret;
}

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
	static uint8_t in[AREA] __attribute__((aligned(64)));
	static uint8_t out[AREA] __attribute__((aligned(64)));
	int iterations = argc > 1 ? atoi(argv[1]) : 1000000;
	long ms = argc > 2 ? atol(argv[2]) : 300;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	const uint32_t mx = 0x7f80;	/* all masked, round toward zero */
	bool avx512;
	size_t len, i;
	int it;

	if (!__builtin_cpu_supports("avx")) {
		printf("skip: no AVX\n");
		return 77;
	}
	avx512 = __builtin_cpu_supports("avx512f");
	len = avx512 ? AREA : 512;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d %s\n", (int)getpid(), avx512 ? "avx512" : "avx");
	for (it = 0; it < iterations; it++) {
		uint32_t mxout = 0;
		uint64_t t0;
		long ret;

		for (i = 0; i < len; i++)
			in[i] = (uint8_t)(i * 37 + (size_t)it * 11 + 0x5a);
		memset(out, 0, sizeof out);
		t0 = mono_ns();
		ret = avx512 ? sleep_avx512(&ts, in, out, mx, &mxout) :
		    sleep_avx(&ts, in, out, mx, &mxout);
		t0 = mono_ns() - t0;
		if (ret != 0)
			printf("SHORT %d: clock_nanosleep returned %ld\n", it, ret);
		else if (t0 + 1000000 < (uint64_t)ms * 1000000u)
			printf("SHORT %d: slept %llu ns of %ld ms\n", it,
			    (unsigned long long)t0, ms);
		if (mxout != mx)
			printf("CORRUPT %d: mxcsr 0x%x, want 0x%x\n", it, mxout, mx);
		for (i = 0; i < len; i++) {
			if (in[i] != out[i]) {
				printf("CORRUPT %d: %s%zu byte %zu\n", it,
				    i < 512 ? "ymm" : "zmm", i < 512 ? i / 32 :
				    16 + (i - 512) / 64, i < 512 ? i % 32 :
				    (i - 512) % 64);
				break;
			}
		}
		if (i == len && ret == 0 && mxout == mx)
			printf("ok %d\n", it);
	}
	return 0;
}
