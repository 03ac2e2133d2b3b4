/*
 * injtool — inject_load() from the command line, for the tests:
 *   injtool PID LIBRARY SYMBOL ARG [TIMEOUT_MS]
 * Prints "ok <microseconds>" or "error <status>: <cause>"; exits with the
 * status.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/util.h"
#include "inject/inject.h"

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
	atexit(inject_release_all);
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
