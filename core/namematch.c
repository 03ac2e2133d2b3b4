/*
 * namematch — -E: PCRE2 over the names of observable functions.
 */
#include "config.h"

#include "core/namematch.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <string.h>

#include "core/util.h"

static pcre2_code *
namematch_compile(const char *what, const char *pattern, char **cause)
{
	PCRE2_SIZE off;
	int err;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
	    PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_UTF, &err, &off, NULL);

	if (re == NULL) {
		PCRE2_UCHAR msg[256];

		pcre2_get_error_message(err, msg, sizeof msg);
		fail(cause, FP_EUSAGE, "bad %s pattern at offset %zu: %s", what, (size_t)off,
		    (char *)msg);
	}
	return re;
}

static int
namematch_one(pcre2_code *re, pcre2_match_data *md, const char *name)
{
	return name != NULL && pcre2_match(re, (PCRE2_SPTR)name, strlen(name), 0, 0, md, NULL) >= 0;
}

/* Methods of one owner (cls: NULL for the module) matching re into targets. */
static void
namematch_methods(pcre2_code *re, pcre2_match_data *md, const char *cls, json_t *methods,
    size_t max, json_t *targets, size_t *matched)
{
	size_t i;
	const char *m;

	for (i = 0; i < json_array_size(methods); i++) {
		m = json_string_value(json_array_get(methods, i));
		if (!namematch_one(re, md, m))
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
	if ((mre = namematch_compile("method", meth_re, cause)) == NULL)
		return FP_EUSAGE;
	if (cls_re != NULL && (cre = namematch_compile("class", cls_re, cause)) == NULL) {
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
		if (namematch_one(cre, md, cname))
			namematch_methods(mre, md, cname, json_array_get(c, 1), max, *targets,
			    matched);
	}
	pcre2_match_data_free(md);
	pcre2_code_free(mre);
	if (cre != NULL)
		pcre2_code_free(cre);
	return FP_OK;
}
