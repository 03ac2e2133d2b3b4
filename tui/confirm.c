#include "config.h"

#include "tui/confirm.h"

#include <curses.h>

#include "tui/tui.h"

#ifndef CTRL
#define CTRL(c) ((c) & 0x1f)
#endif

bool
tui_confirm(struct tui *t, const char *question)
{
	wint_t wc;
	int r;

	bool yes;

	tui_status(t, false, "%s", question);
	nodelay(stdscr, FALSE);
	for (;;) {
		tui_draw(t);
		r = wget_wch(stdscr, &wc);
		if (r == ERR)
			continue;
		if (r == KEY_CODE_YES) {
			if (wc == KEY_RESIZE)
				tui_relayout(t);
			continue;
		}
		if (wc == 'y' || wc == 'Y') {
			yes = true;
			break;
		}
		if (wc == 'n' || wc == 'N' || wc == 27 || wc == 'q' || wc == CTRL('c') || wc == '\n' ||
		    wc == '\r') {
			yes = false;
			break;
		}
	}
	nodelay(stdscr, TRUE);	/* as the main loop wants it: it polls */
	return yes;
}
