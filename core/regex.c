/*
 * regex — compiling and matching the user's PCRE2 patterns (see regex.h).
 */
#include "config.h"

#include "core/regex.h"

#include <string.h>

#include "core/util.h"

pcre2_code *
regex_compile(const char *pattern, uint32_t flags, const char *what, char **cause)
{
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE off;
	pcre2_code *re;
	int err;

	re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
	    PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | flags, &err, &off, NULL);
	if (re == NULL) {
		pcre2_get_error_message(err, msg, sizeof msg);
		fail(cause, FP_EUSAGE, "bad %s at offset %zu: %s", what, (size_t)off, (char *)msg);
	}
	return re;
}

uint32_t
regex_smart_case(const char *pattern)
{
	const char *c;

	for (c = pattern; *c != '\0'; c++)
		if (*c >= 'A' && *c <= 'Z')
			return 0;
	return PCRE2_CASELESS;
}

bool
regex_match(const pcre2_code *re, pcre2_match_data *md, const char *s)
{
	return s != NULL && pcre2_match(re, (PCRE2_SPTR)s, strlen(s), 0, 0, md, NULL) >= 0;
}
