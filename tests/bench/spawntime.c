/*
 * spawntime — run a command N times (posix_spawn + waitpid, output to
 * /dev/null) and print "median min max" wall times in milliseconds.
 * The same harness times the baseline (/bin/true) and flight_profiler, so
 * their ratio means something on a noisy machine.
 *
 * usage: spawntime N COMMAND [ARGS...]
 */
#include "config.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	posix_spawn_file_actions_t fa;
	double *t;
	int n, i, failures = 0;

	if (argc < 3 || (n = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: spawntime N COMMAND [ARGS...]\n");
		return 2;
	}
	t = calloc((size_t)n, sizeof *t);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	for (i = 0; i < n; i++) {
		struct timespec a, b;
		pid_t pid;
		int status;

		clock_gettime(CLOCK_MONOTONIC, &a);
		if (posix_spawn(&pid, argv[2], &fa, NULL, argv + 2, environ) != 0) {
			perror(argv[2]);
			return 1;
		}
		waitpid(pid, &status, 0);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failures++;
		t[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	}
	qsort(t, (size_t)n, sizeof *t, cmp_double);
	printf("%.3f %.3f %.3f %d\n", n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2,
	    t[0], t[n - 1], failures);
	free(t);
	return 0;
}
