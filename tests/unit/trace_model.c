/*
 * trace_model unit test: a `trace` event into struct trace_record (bad and
 * missing fields included, a deep tree bounded) and its plain text, where
 * the target's names are escaped.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/model_trace.h"
#include "core/render_trace.h"
#include "tests/unit/tap.h"

static char *
rendered(const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &err);
	struct trace_record t;
	struct sbuf out = { 0 };

	if (v == NULL)
		diag("bad test JSON: %s", err.text);
	trace_record_parse(v, &t);
	render_trace_record(&out, &t);
	trace_record_clear(&t);
	json_decref(v);
	return sbuf_steal(&out);
}

static void
test_tree(void)
{
	char *s = rendered("{\"index\": 1, \"method\": \"m.f\", \"thread\": \"T\", \"time\": 0, "
	    "\"cost_ms\": 2.5, \"tree\": {\"name\": \"f\", \"file\": \"/x/a.py\", \"def_line\": 3, "
	    "\"count\": 1, \"total_ns\": 2500000, \"min_ns\": 2500000, \"max_ns\": 2500000, "
	    "\"children\": [{\"name\": \"g\", \"file\": \"/x/a.py\", \"def_line\": 9, \"line\": 4, "
	    "\"count\": 3, \"total_ns\": 2000000, \"min_ns\": 500000, \"max_ns\": 1000000, "
	    "\"children\": []}, {\"name\": \"time.sleep\", \"c\": true, \"line\": 5, \"count\": 1, "
	    "\"total_ns\": 400, \"min_ns\": 400, \"max_ns\": 400}], \"hidden\": 2, "
	    "\"hidden_ns\": 1500}}");
	const char *want =
	    "`---[100.0%    2.500ms] f  (a.py:3)\n"
	    "    +---[ 80.0%    2.000ms] g #4  (a.py:9)  [count=3 min=500.0us max=1.000ms "
	    "total=2.000ms]\n"
	    "    `---[  0.0%      0.4us] time.sleep #5\n"
	    "        (2 more calls, 1.5us: under -i, below -d or importing)\n";

	ok(s != NULL && strstr(s, "  m.f  thread=T  cost=2.500 ms\n") != NULL,
	    "the header names the method, thread and cost");
	ok(s != NULL && strstr(s, want) != NULL, "the tree: shares, call sites, merged repeats, "
	    "the calls left out");
	if (s == NULL || strstr(s, want) == NULL)
		diag("got:\n%s", s ? s : "(null)");
	free(s);
}

static void
test_bad(void)
{
	char *s = rendered("{\"index\": \"x\", \"method\": 3, \"tree\": {\"name\": \"\\u001b[2Jevil\", "
	    "\"children\": [1, {\"children\": \"no\"}], \"total_ns\": 0}}");

	ok(s != NULL && strstr(s, "\033") == NULL && strstr(s, "\\x1b[2Jevil") != NULL,
	    "a name's control characters are escaped");
	ok(s != NULL && strstr(s, "[  0.0%") != NULL, "a parent of no cost gives a 0 %% share");
	free(s);
	s = rendered("{\"index\": 2, \"tree\": null}");
	ok(s != NULL && strstr(s, "(no call tree was recorded)") != NULL, "no tree: said so");
	free(s);
}

static void
test_deep(void)
{
	struct sbuf j = { 0 };
	char *s;
	int i;

	sbuf_add(&j, "{\"index\": 1, \"tree\": ");
	size_t lines = 0;
	const char *p;

	for (i = 0; i < 1000; i++)
		sbuf_add(&j, "{\"name\": \"r\", \"total_ns\": 1, \"children\": [");
	for (i = 0; i < 1000; i++)
		sbuf_add(&j, "]}");
	sbuf_add(&j, "}");
	s = rendered(j.s);
	for (p = s; p != NULL && (p = strchr(p, '\n')) != NULL; p++)
		lines++;
	ok(s != NULL && lines > 250 && lines < 400, "1,000 levels: the first 300 are drawn (%zu "
	    "lines)", lines);
	free(s);
	sbuf_free(&j);
}

int
main(void)
{
	test_tree();
	test_bad();
	test_deep();
	return done_testing();
}
