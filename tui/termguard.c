#include "config.h"

#include "tui/termguard.h"

#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/tstop.h"
#include "core/util.h"

static char restore_seq[512];
static size_t restore_len;
static struct termios restore_tio;
static int restore_fd = -1;
static volatile sig_atomic_t restore_set;

static void
restore_terminal(void)
{
	if (!restore_set)
		return;
	restore_set = 0;
	(void)!write(restore_fd, restore_seq, restore_len);
	tcsetattr(restore_fd, TCSANOW, &restore_tio);
}

static void
fatal(int sig)
{
	/*
	 * Never leave a thread of the target stopped, traced or hijacked:
	 * core/tstop holds every thread, the injector's too (its rescue first).
	 */
	tstop_release_all();
	restore_terminal();
	signal(sig, SIG_DFL);
	raise(sig);
}

void
guard_install(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS,
	    SIGABRT, SIGFPE, SIGILL };
	static bool done;
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fatal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESETHAND;
	for (i = 0; i < FP_NELEM(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (!done) {
		done = true;
		atexit(tstop_release_all);
	}
}

void
guard_terminal(int fd, const char *restore, const struct termios *tio)
{
	size_t n;

	restore_set = 0;
	if (restore == NULL)
		return;
	n = strlen(restore);
	if (n >= sizeof restore_seq)
		n = sizeof restore_seq - 1;
	memcpy(restore_seq, restore, n);
	restore_len = n;
	restore_tio = *tio;
	restore_fd = fd;
	restore_set = 1;
}
