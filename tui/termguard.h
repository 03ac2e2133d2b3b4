/*
 * termguard — leave the target and the terminal as they were, whatever
 * way we exit.  Fatal signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV,
 * SIGBUS, SIGABRT, SIGFPE, SIGILL) release every thread tstop holds,
 * restore the terminal if the TUI changed it, and re-raise the signal so
 * the exit status says what happened.
 *
 * Everything the handler does is async-signal-safe: write(2) of a
 * sequence prepared in advance and tcsetattr(3).
 */
#ifndef FP_TERMGUARD_H
#define FP_TERMGUARD_H

#include <termios.h>

/* Install the handlers (idempotent); also atexit(tstop_release_all). */
void guard_install(void);

/*
 * While the screen is taken: on a fatal signal write `restore` (leave the
 * alternate screen, show the cursor, mouse reporting off...) to `fd` and
 * put back `tio` on the terminal.  NULL `restore` forgets it.
 */
void guard_terminal(int fd, const char *restore, const struct termios *tio);

#endif
