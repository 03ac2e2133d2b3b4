/*
 * injtool — inject_load() from the command line, for the tests:
 *   injtool PID LIBRARY SYMBOL ARG [TIMEOUT_MS]
 * Prints "ok <microseconds>" or "error <status>: <cause>"; exits with the
 * status.  SIGUSR2 does what a fatal signal does to flight_profiler (its
 * handler lets go of the target: inject_release_all()) and exits with 3.
 * FP_TEST_RESUME_PAUSE_MS=N pauses N ms after each resume of the held
 * thread, so that SIGUSR2 lands while the thread already runs our call.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "inject/inject.h"
#include "inject/ptrace.h"

static unsigned resume_pause_ms;

static void
pause_after_resume(void)
{
	struct timespec ts = { resume_pause_ms / 1000,
	    (long)(resume_pause_ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);	/* a signal cuts it short: that is the point */
}

static void
on_usr2(int sig)
{
	(void)sig;
	inject_release_all();
	_exit(3);
}

int
main(int argc, char **argv)
{
	struct inject_opts opts = { 0 };
	char *cause = NULL;
	uint64_t t0;
	int rc;

	if (argc < 5 || argc > 6) {
		fprintf(stderr, "usage: injtool PID LIBRARY SYMBOL ARG "
		    "[TIMEOUT_MS]\n");
		return FP_EUSAGE;
	}
	if (argc == 6)
		opts.timeout_ms = atoi(argv[5]);
	if (getenv("FP_TEST_RESUME_PAUSE_MS") != NULL &&
	    (resume_pause_ms = (unsigned)atoi(getenv("FP_TEST_RESUME_PAUSE_MS"))) > 0)
		ptrace_after_resume_hook = pause_after_resume;
	atexit(inject_release_all);
	signal(SIGUSR2, on_usr2);
	t0 = now_ns();
	rc = inject_load((pid_t)atoi(argv[1]), argv[2], argv[3],
	    argv[4][0] ? argv[4] : NULL, &opts, &cause);
	if (rc == 0)
		printf("ok %llu\n", (unsigned long long)((now_ns() - t0) / 1000));
	else
		printf("error %d: %s\n", rc, cause ? cause : "(no cause)");
	free(cause);
	return rc;
}
