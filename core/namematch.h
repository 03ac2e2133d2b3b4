/*
 * namematch — -E of watch, trace, tt and monitor: pick, from the names the
 * agent lists as observable in a module (its "names" answer), the functions
 * whose class and method names match PCRE2 patterns (whole names, UTF-8),
 * on the client side with the engine the TUI's search uses, so that the
 * target runs no regular expression of ours.  Never talks to the agent.
 */
#ifndef FP_NAMEMATCH_H
#define FP_NAMEMATCH_H

#include <jansson.h>
#include <stddef.h>

/* Most functions one -E request observes; the rest are only counted. */
#define NAMEMATCH_MAX 20

/*
 * names: {"functions": [...], "classes": [[class, [methods]]]}.  cls_re
 * NULL: module functions matching meth_re; else methods matching meth_re
 * of classes matching cls_re.  *targets (new array of [class|null, method],
 * in the agent's order, at most max) and *matched (all matches).  Fails
 * with a usage error for a bad pattern.
 */
int namematch_select(json_t *names, const char *cls_re, const char *meth_re, size_t max,
    json_t **targets, size_t *matched, char **cause);

#endif
