/*
 * clock — the agent's hot-path clock: see clock.h.
 */
#include "config.h"

#include "inject/agent/clock.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

struct agent_clock_line agent_clock_lines[2];
_Atomic unsigned agent_clock_seq;
_Atomic bool agent_clock_fast;

#if defined(__x86_64__)

/* How long the counter's rate is first measured over (the server's first
 * turns: it does not wait for it), and how often the line is tuned after:
 * the rate's error is two clock readings' (~50 ns) over the time since the
 * start, 10 ppm at 5 ms, falling as that grows. */
#define START_NS	5000000LL
#define TUNE_NS		1000000000LL
/* Further off than this (the machine slept, a VM was paused) the line is
 * moved at once instead of bent back over the next second. */
#define JUMP_NS		1000000LL

static struct {
	uint64_t tsc;		/* the first reading: the rate's base */
	int64_t ns;
	int64_t tuned_ns;	/* when the line was last tuned */
	bool started;		/* the counter may be used: the first reading is taken */
} C;

/* A counter reading and the kernel's time at the same moment (the middle
 * of the tightest of three brackets). */
static void
sample(uint64_t *tsc, int64_t *ns)
{
	uint64_t best = UINT64_MAX, a, b;
	int64_t t;
	int i;

	for (i = 0; i < 3; i++) {
		a = agent_clock_tsc();
		t = agent_clock_kernel_ns();
		b = agent_clock_tsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = t;
		}
	}
}

/* Does the kernel keep time with the counter (then it is invariant and in
 * step across CPUs: the kernel checked)? */
static bool
kernel_uses_tsc(void)
{
	char buf[32];
	ssize_t n;
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
	    O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strcmp(buf, "tsc\n") == 0 || strcmp(buf, "tsc") == 0;
}

/*
 * May this process read the counter?  prctl(PR_SET_TSC) can make rdtsc
 * fault; a program still running then has its faults handled, as rr's
 * recording does (the vDSO's clock_gettime reads the counter too, and
 * would kill it otherwise): leave the counter to clock_gettime there.
 */
static bool
tsc_allowed(void)
{
	int state = 0;

	return prctl(PR_GET_TSC, &state, 0, 0, 0) == 0 && state == PR_TSC_ENABLE;
}

void
agent_clock_start(void)
{
	const char *want = getenv("FP_AGENT_CLOCK");

	/* Started once; a resumed server (after the program's fork) keeps it.
	 * FP_AGENT_CLOCK=kernel in the program's environment keeps
	 * clock_gettime (the tests time both ways). */
	if (C.started || (want != NULL && strcmp(want, "kernel") == 0) || !kernel_uses_tsc() ||
	    !tsc_allowed())
		return;
	sample(&C.tsc, &C.ns);
	C.started = true;
}

/* The counter's rate, once START_NS passed since agent_clock_start(): from
 * then on agent_now_ns() reads the counter. */
static void
first_line(void)
{
	uint64_t tsc;
	int64_t ns;
	double k;

	sample(&tsc, &ns);
	if (tsc <= C.tsc || ns - C.ns < START_NS)
		return;
	k = (double)(ns - C.ns) / (double)(tsc - C.tsc);
	/* 100 MHz to 100 GHz: anything else is not a time-stamp counter. */
	if (!(k > 0.01 && k < 10.0)) {
		C.started = false;
		return;
	}
	agent_clock_lines[0] = (struct agent_clock_line){ tsc, ns, k };
	C.tuned_ns = ns;
	atomic_store_explicit(&agent_clock_seq, 0, memory_order_release);
	atomic_store_explicit(&agent_clock_fast, true, memory_order_release);
}

void
agent_clock_tune(void)
{
	unsigned seq = atomic_load_explicit(&agent_clock_seq, memory_order_relaxed);
	const struct agent_clock_line *l = &agent_clock_lines[seq & 1];
	struct agent_clock_line *n = &agent_clock_lines[(seq + 1) & 1];
	uint64_t tsc;
	int64_t ns, on_line, err;
	double k, bend;

	if (!C.started)
		return;
	if (!atomic_load_explicit(&agent_clock_fast, memory_order_relaxed)) {
		first_line();
		return;
	}
	if (agent_clock_kernel_ns() - C.tuned_ns < TUNE_NS)
		return;
	sample(&tsc, &ns);
	if (tsc <= C.tsc)
		return;
	C.tuned_ns = ns;
	/* The rate over all the time since the start, then bent so that the
	 * line meets the kernel's clock again one tune later: no jump. */
	k = (double)(ns - C.ns) / (double)(tsc - C.tsc);
	on_line = agent_clock_at(l, tsc);
	err = ns - on_line;
	if (err > JUMP_NS || err < -JUMP_NS) {
		*n = (struct agent_clock_line){ tsc, ns, k };
	} else {
		bend = (double)err / (double)TUNE_NS;
		*n = (struct agent_clock_line){ tsc, on_line, k * (1.0 + bend) };
	}
	atomic_store_explicit(&agent_clock_seq, seq + 1, memory_order_release);
}

#else /* the counter is read on x86-64 only: elsewhere clock_gettime() */

void
agent_clock_start(void)
{
}

void
agent_clock_tune(void)
{
}

#endif
