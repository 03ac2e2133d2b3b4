/*
 * clock — the clock the agent's hot paths read (trace's every frame,
 * watch's every call): CLOCK_MONOTONIC in ns, as time.monotonic_ns()
 * gives it to helper.py, but from the CPU's time-stamp counter where the
 * kernel itself keeps time with it.
 *
 * Why: the vDSO's clock_gettime costs 36-45 ns in this kind of VM (an
 * ordered rdtsc, a seqcount loop, a multiply); trace reads the clock twice
 * per traced call and it was a third of what a traced call cost on 3.12.
 * A bare rdtsc is half of that.
 *
 * The counter is read only where it is safe to (x86-64 with the kernel's
 * clocksource "tsc": the kernel checked it is invariant and in step on
 * every CPU); anywhere else, and until agent_clock_start() has measured
 * the counter's rate, agent_now_ns() is clock_gettime().  Both give
 * CLOCK_MONOTONIC's time: the counter through a line (an anchor and a
 * rate) that agent_clock_tune(), on the server thread, moves back onto
 * the kernel's clock at most once a second, without a jump: records
 * timed in C and in Python stay on one clock (within microseconds).
 */
#ifndef FP_AGENT_CLOCK_H
#define FP_AGENT_CLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* The line from counter to ns.  Two: readers use agent_clock_lines[seq &
 * 1]; agent_clock_tune() writes the other one, then adds 1 to seq. */
struct agent_clock_line {
	uint64_t tsc0;		/* counter at the anchor */
	int64_t ns0;		/* CLOCK_MONOTONIC at the anchor */
	double ns_per_tick;
};

extern struct agent_clock_line agent_clock_lines[2];
extern _Atomic unsigned agent_clock_seq;
extern _Atomic bool agent_clock_fast;

/* Take the counter's first reading (the server thread, as it starts);
 * nothing when the counter is not safe.  The rate is known, and the
 * counter read, from the first agent_clock_tune() 5 ms later. */
void agent_clock_start(void);
/* Bring the line back onto CLOCK_MONOTONIC (the server thread, each turn
 * of its loop: it does something at most once a second). */
void agent_clock_tune(void);

static inline int64_t
agent_clock_kernel_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#if defined(__x86_64__)
static inline uint64_t
agent_clock_tsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#endif

/* The time line l gives for counter reading tsc (before its anchor too). */
static inline int64_t
agent_clock_at(const struct agent_clock_line *l, uint64_t tsc)
{
	return l->ns0 + (int64_t)((double)(int64_t)(tsc - l->tsc0) * l->ns_per_tick);
}

/* CLOCK_MONOTONIC in ns: time.monotonic_ns(), the clock helper.py's _ns() reads, so the C and
 * Python sides of the agent time calls on one clock (trace, watch). */
static inline long long
agent_now_ns(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(atomic_load_explicit(&agent_clock_fast, memory_order_acquire), 1)) {
		unsigned seq;
		int64_t ns;

		/* seq moved on while the line was read: the reader was held
		 * up long enough for that very line to be rewritten.  Again. */
		do {
			seq = atomic_load_explicit(&agent_clock_seq, memory_order_acquire);
			ns = agent_clock_at(&agent_clock_lines[seq & 1], agent_clock_tsc());
			atomic_thread_fence(memory_order_acquire);
		} while (atomic_load_explicit(&agent_clock_seq, memory_order_relaxed) != seq);
		return ns;
	}
#endif
	return agent_clock_kernel_ns();
}

#endif
