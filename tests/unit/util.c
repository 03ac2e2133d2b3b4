/* util unit test: arrays, string buffers, the cause convention. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "tests/unit/tap.h"

int
main(void)
{
	struct sbuf b = { 0 };
	char *cause = NULL, *s;
	int *arr = NULL;
	size_t n = 0, alloc = 0, i;

	for (i = 0; i < 1000; i++)
		*ARRAY_PUSH(arr, n, alloc) = (int)i;
	ok(n == 1000 && alloc >= 1000 && arr[999] == 999, "ARRAY_PUSH grows to 1000");
	free(arr);

	sbuf_add(&b, "stack");
	sbuf_addf(&b, " -f %s", "x.log");
	sbuf_addn(&b, "--native", 2);
	s = sbuf_steal(&b);
	is_str(s, "stack -f x.log--", "sbuf builds a string");
	ok(b.s == NULL && b.len == 0, "sbuf_steal empties the buffer");
	free(s);
	s = sbuf_steal(&b);
	is_str(s, "", "an empty sbuf steals as an empty string");
	free(s);

	ok(fail(&cause, FP_EPERM, "first %d", 1) == FP_EPERM, "fail returns its status");
	ok(fail(&cause, FP_ENOPROC, "second") == FP_ENOPROC && strcmp(cause, "second") == 0,
	    "fail replaces the previous cause");
	free(cause);
	ok(fail(NULL, FP_ERR, "nobody listens") == FP_ERR, "fail accepts a NULL cause");

	s = read_file_str("/proc/self/comm", NULL);
	ok(s != NULL && strncmp(s, "util.t", 6) == 0, "read_file_str reads /proc");
	free(s);
	ok(read_file_str("/nonexistent/file", NULL) == NULL, "read_file_str fails on a missing file");
	return done_testing();
}
