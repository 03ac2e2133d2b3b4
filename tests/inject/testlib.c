/*
 * testlib — the library the injector tests load.  Like the agent: the
 * constructor does nothing; bootstrap(path) copies its argument (the
 * injector unmaps it as soon as bootstrap returns), starts a detached
 * thread with every signal blocked, and returns at once.  The thread writes
 * "loaded <pid>" to the file.  slow_bootstrap(path) writes "entered" to the
 * file and takes a second to return: the injector can be killed while the
 * hijacked thread runs it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void bootstrap(const char *arg) __attribute__((visibility("default")));
void slow_bootstrap(const char *arg) __attribute__((visibility("default")));

static void *
writer(void *p)
{
	char *path = p, buf[64];
	int fd, n;

	n = snprintf(buf, sizeof buf, "loaded %d\n", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd != -1) {
		if (write(fd, buf, (size_t)n) != n)
			(void)unlink(path);
		close(fd);
	}
	free(path);
	return NULL;
}

void
bootstrap(const char *arg)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t th;
	char *path;

	if (arg == NULL || (path = strdup(arg)) == NULL)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, writer, path) != 0)
		free(path);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void
slow_bootstrap(const char *arg)
{
	struct timespec second = { 1, 0 };
	int fd;

	if (arg == NULL)
		return;
	fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd != -1) {
		if (write(fd, "entered\n", 8) != 8)
			(void)unlink(arg);
		close(fd);
	}
	while (nanosleep(&second, &second) == -1)
		continue;
}
