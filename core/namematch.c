/*
 * namematch — -E: PCRE2 over the names of observable functions.
 */
#include "config.h"

#include "core/namematch.h"

#include <string.h>

#include "core/regex.h"
#include "core/util.h"

/* A pattern matches a name only as a whole. */
#define WHOLE (PCRE2_ANCHORED | PCRE2_ENDANCHORED)

/* Methods of one owner (cls: NULL for the module) matching re into targets. */
static void
namematch_methods(pcre2_code *re, pcre2_match_data *md, const char *cls, json_t *methods,
    size_t max, json_t *targets, size_t *matched)
{
	size_t i;
	const char *m;

	for (i = 0; i < json_array_size(methods); i++) {
		m = json_string_value(json_array_get(methods, i));
		if (!regex_match(re, md, m))
			continue;
		if (json_array_size(targets) < max)
			json_array_append_new(targets, json_pack("[s?s]", cls, m));
		(*matched)++;
	}
}

int
namematch_select(json_t *names, const char *cls_re, const char *meth_re, size_t max,
    json_t **targets, size_t *matched, char **cause)
{
	pcre2_code *cre = NULL, *mre;
	pcre2_match_data *md;
	json_t *classes = json_object_get(names, "classes"), *c;
	const char *cname;
	size_t i;

	*targets = NULL;
	*matched = 0;
	if ((mre = regex_compile(meth_re, WHOLE, "method pattern", cause)) == NULL)
		return FP_EUSAGE;
	if (cls_re != NULL && (cre = regex_compile(cls_re, WHOLE, "class pattern", cause)) == NULL) {
		pcre2_code_free(mre);
		return FP_EUSAGE;
	}
	md = pcre2_match_data_create(1, NULL);
	*targets = json_array();
	if (cre == NULL)
		namematch_methods(mre, md, NULL, json_object_get(names, "functions"), max, *targets,
		    matched);
	for (i = 0; cre != NULL && i < json_array_size(classes); i++) {
		c = json_array_get(classes, i);
		cname = json_string_value(json_array_get(c, 0));
		if (regex_match(cre, md, cname))
			namematch_methods(mre, md, cname, json_array_get(c, 1), max, *targets,
			    matched);
	}
	pcre2_match_data_free(md);
	pcre2_code_free(mre);
	if (cre != NULL)
		pcre2_code_free(cre);
	return FP_OK;
}
