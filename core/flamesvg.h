/*
 * flamesvg — a profile as a self-contained interactive flamegraph SVG, as
 * flamegraph.pl draws them: hover shows a frame's samples and share, a
 * click zooms into it, "Search" highlights a regular expression's matches
 * and shows the share they cover.  The script is inline: the file needs no
 * network and opens in any browser.  Every name is XML-escaped.
 */
#ifndef FP_FLAMESVG_H
#define FP_FLAMESVG_H

#include <stdio.h>

#include "core/profile.h"

/* Returns 0, or -1 with errno from the stream. */
int flamesvg_write(const struct profile *p, FILE *f, const char *title, const char *subtitle);

#endif
