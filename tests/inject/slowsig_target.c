/*
 * slowsig_target — a process whose SIGUSR1 handler takes its time.
 *
 * The handler counts and then spins for HANDLER_US microseconds, as a C
 * extension's handler may.  Signals a held thread took are handed back one
 * by one; an injector that sends the next SIGUSR1 while the handler of the
 * previous one still runs leaves it pending, blocked behind that handler,
 * where a SIGUSR1 from elsewhere merges with it.  With a handler this long
 * that happens in most injections, so the count shows it.
 *
 *   slowsig_target FLAGFILE
 * Prints "ready", sleeps until FLAGFILE exists, prints "signals N".
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HANDLER_US 600

static volatile sig_atomic_t count;

static long long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
on_usr1(int sig)
{
	long long end = now_us() + HANDLER_US;

	(void)sig;
	count++;
	while (now_us() < end)
		continue;
}

int
main(int argc, char **argv)
{
	struct timespec nap = { 0, 20 * 1000000 };
	struct sigaction sa;

	if (argc != 2) {
		fprintf(stderr, "usage: slowsig_target FLAGFILE\n");
		return 2;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (access(argv[1], F_OK) != 0)
		nanosleep(&nap, NULL);	/* EINTR: just look again */
	printf("signals %d\n", (int)count);
	return 0;
}
