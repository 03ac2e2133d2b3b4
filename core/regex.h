/*
 * regex — the one way a PCRE2 pattern of the user's is compiled: UTF,
 * invalid UTF in the subject allowed (names and command lines from
 * another process are bytes), and a bad pattern reported in one line
 * that says where it is wrong.
 */
#ifndef FP_CORE_REGEX_H
#define FP_CORE_REGEX_H

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * pattern compiled with PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | flags, or
 * NULL with cause "bad WHAT at offset N: why" (FP_EUSAGE).
 */
pcre2_code *regex_compile(const char *pattern, uint32_t flags, const char *what, char **cause);

/* PCRE2_CASELESS when the pattern has no capital letter (smart case, as in less -i). */
uint32_t regex_smart_case(const char *pattern);

/* Does re match in s? A NULL s matches nothing. md: from re. */
bool regex_match(const pcre2_code *re, pcre2_match_data *md, const char *s);

#endif
