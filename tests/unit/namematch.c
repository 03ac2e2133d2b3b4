/*
 * namematch: -E's PCRE2 selection over an agent's "names" answer — whole
 * names only, class then method, the bound on what is observed, the count
 * of everything that matched, and bad patterns as usage errors.
 */
#include "config.h"

#include <stdlib.h>

#include "core/namematch.h"
#include "core/util.h"
#include "tap.h"

static json_t *
names(void)
{
	json_t *n = json_pack("{s:[sss], s:[[s,[sss]], [s,[s]], [s,[]]]}",
	    "functions", "add", "add2", "madd",
	    "classes", "Calc", "mul", "muls", "neg", "Calc2", "mul", "Other");
	json_t *many = json_array();
	int i;

	for (i = 0; i < 30; i++)
		json_array_append_new(many, json_sprintf("f%02d", i));
	json_array_extend(json_object_get(n, "functions"), many);
	json_decref(many);
	return n;
}

static char *
picks(json_t *targets)
{
	char *s = json_dumps(targets, JSON_COMPACT);

	json_decref(targets);
	return s;
}

int
main(void)
{
	json_t *n = names(), *t;
	size_t matched;
	char *cause = NULL, *s;
	int rc;

	plan(9);
	ok(namematch_select(n, NULL, "add", 20, &t, &matched, &cause) == FP_OK && matched == 1,
	    "a plain name matches itself only, not add2 or madd");
	s = picks(t);
	ok(strcmp(s, "[[null,\"add\"]]") == 0, "module functions come with a null class: %s", s);
	free(s);
	namematch_select(n, "Calc.?", "(?:mul|neg)", 20, &t, &matched, &cause);
	s = picks(t);
	ok(matched == 3 && strcmp(s, "[[\"Calc\",\"mul\"],[\"Calc\",\"neg\"],[\"Calc2\",\"mul\"]]")
	    == 0, "class and method patterns, whole names, in the agent's order: %s", s);
	free(s);
	namematch_select(n, NULL, "f\\d+", 20, &t, &matched, &cause);
	ok(matched == 30 && json_array_size(t) == 20, "30 matched, 20 observed (%zu, %zu)",
	    matched, json_array_size(t));
	json_decref(t);
	ok(namematch_select(n, "(?i)calc", "NEG", 20, &t, &matched, &cause) == FP_OK &&
	    matched == 0, "patterns are case-sensitive unless they say (?i)");
	json_decref(t);
	ok(namematch_select(n, NULL, "mu(", 20, &t, &matched, &cause) == FP_EUSAGE && t == NULL,
	    "a bad method pattern is a usage error");
	ok(cause != NULL && strncmp(cause, "bad method pattern at offset 3: ", 32) == 0,
	    "that says where: %s", cause ? cause : "(none)");
	free(cause);
	cause = NULL;
	rc = namematch_select(n, "[", "mul", 20, &t, &matched, &cause);
	ok(rc == FP_EUSAGE && cause != NULL && strncmp(cause, "bad class pattern", 17) == 0,
	    "a bad class pattern too: %s", cause ? cause : "(none)");
	free(cause);
	cause = NULL;
	ok(namematch_select(n, NULL, "\xff", 20, &t, &matched, &cause) == FP_EUSAGE,
	    "a pattern that is not UTF-8 is refused, not matched byte-wise");
	free(cause);
	json_decref(n);
	return tap_failed != 0;
}
