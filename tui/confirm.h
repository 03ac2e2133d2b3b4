/*
 * confirm — a yes/no question in the status line that waits for the answer
 * (the screen stays drawn; the refresh waits with it).
 */
#ifndef FP_CONFIRM_H
#define FP_CONFIRM_H

#include <stdbool.h>

struct tui;

/* `question` (it should end with "[y/N]"); true for y, false for n, Esc,
 * q, Ctrl-C or Enter.  Other keys are ignored; a resize redraws. */
bool tui_confirm(struct tui *t, const char *question);

#endif
