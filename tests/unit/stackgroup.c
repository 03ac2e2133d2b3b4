/*
 * stackgroup.c — the records of --json read back (core/jsonrec) and
 * grouped across hosts (core/stackgroup): what --hosts does with the
 * records of every host, without ssh.  A stack written and parsed back
 * groups as the original; members are named per host, in the hosts'
 * order; bytes that are not UTF-8 survive as \xNN text.
 */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonrec.h"
#include "core/stackgroup.h"
#include "tests/unit/tap.h"

static struct py_frame wait_frames[] = {
	{ .filename = "/srv/job.py", .name = "wait_for_work", .line = 30 },
	{ .filename = "/srv/job.py", .name = "<module>", .line = 56 },
};
static struct py_frame odd_frames[] = {
	{ .filename = "/srv/j\xf6" "b.py", .name = "elsewhere", .line = 36 },
	{ .filename = "/srv/job.py", .name = "<module>", .line = 56 },
};

static struct py_thread
thread(pid_t tid, const char *name, struct py_frame *frames, size_t n)
{
	return (struct py_thread){ .tid = tid, .name = (char *)name, .is_main = true,
		.frames = frames, .nframes = n };
}

/* The record of a one-thread process, parsed back. */
static int
round_trip(pid_t pid, struct py_thread *t, struct jsonrec_process *p, char **line)
{
	struct py_snapshot snap = { .pid = pid, .version = "3.12.1", .threads = t, .nthreads = 1 };
	struct sbuf out = { 0 };
	char *cause = NULL;
	json_t *rec;
	int rc;

	/* pid 0 has no environment to read a rank from */
	jsonrec_emit(&out, jsonrec_stack(pid, "python3 job.py", &snap, NULL));
	rec = json_loads(out.s, 0, NULL);
	rc = rec != NULL ? jsonrec_parse_stack(rec, p, &cause) : FP_ERR;
	json_decref(rec);
	free(cause);
	*line = sbuf_steal(&out);
	return rc;
}

static void
test_round_trip(void)
{
	struct py_thread t = thread(7, "Main\x01", odd_frames, 2);
	struct jsonrec_process p;
	char *line;

	ok(round_trip(0, &t, &p, &line) == FP_OK, "a stack record parses back");
	ok(strchr(line, '\n') == line + strlen(line) - 1 &&
	    strstr(line, "\"type\":\"stack\",\"version\":\"" PACKAGE_VERSION "\"") == line + 1,
	    "one line, type and version first");
	ok(p.nthreads == 1 && p.threads[0].nframes == 2 && p.threads[0].tid == 7 &&
	    strcmp(p.threads[0].name, "Main\x01") == 0 && strcmp(p.threads[0].frames[0].name, "elsewhere") == 0 &&
	    p.threads[0].frames[0].line == 36, "threads, names and frames come back (innermost first)");
	ok(strcmp(p.threads[0].frames[0].filename, "/srv/j\\xf6b.py") == 0,
	    "a byte that is not UTF-8 comes back as \\xNN text: %s", p.threads[0].frames[0].filename);
	ok(strstr(line, "\\u0001") != NULL, "a control character is escaped in the record");
	jsonrec_process_clear(&p);
	free(line);
}

static void
test_grouped_across_hosts(void)
{
	struct py_thread local[3] = {
		thread(11, "MainThread", wait_frames, 2), thread(10, "MainThread", wait_frames, 2),
		thread(12, "MainThread", odd_frames, 2),
	};
	struct jsonrec_process p[2][3];
	struct stackgroup_item items[6];
	const char *hosts[2] = { "h2", "h1" };
	struct sbuf text = { 0 }, json = { 0 };
	char *line;
	int h, i, parsed = 0;

	for (h = 0; h < 2; h++)
		for (i = 0; i < 3; i++) {
			parsed += round_trip(local[i].tid, &local[i], &p[h][i], &line) == FP_OK;
			free(line);
			items[h * 3 + i] = (struct stackgroup_item){ .host = hosts[h], .host_index = h,
				.pid = p[h][i].pid, .rank = -1, .t = &p[h][i].threads[0],
				.code = p[h][i].code[0] };
		}
	ok(parsed == 6, "six records parse back");
	stackgroup_render(&text, items, 6, false, false);
	ok(strstr(text.s, "\n4 threads in 4 processes \u2014 h2: pids 10, 11; h1: pids 10, 11, "
	    "threads MainThread:\n    File \"/srv/job.py\", line 56, in <module>\n") != NULL,
	    "the group names its members per host, in the hosts' order");
	ok(strstr(text.s, "\n2 threads in 2 processes \u2014 h2: pid 12; h1: pid 12, threads MainThread:\n") != NULL &&
	    strstr(text.s, "Odd ones out") == NULL, "the same odd stack on two hosts is a group of two");
	stackgroup_render(&json, items, 3, false, true);
	ok(json.s != NULL && strstr(json.s, "{\"type\":\"group\",") == json.s &&
	    strstr(json.s, "\"odd\":true") != NULL && strstr(json.s, "\"host\":\"h2\"") != NULL,
	    "one group record each, the odd one marked");
	sbuf_free(&text);
	sbuf_free(&json);
	for (h = 0; h < 2; h++)
		for (i = 0; i < 3; i++)
			jsonrec_process_clear(&p[h][i]);
}

static void
test_ranks(void)
{
	struct py_thread t = thread(1, "MainThread", wait_frames, 2);
	struct stackgroup_item items[7];
	struct sbuf text = { 0 };
	int i;

	/* h1: ranks 3..0 in pids 100..103, and 104 a worker of rank 0; h2: no ranks */
	for (i = 0; i < 5; i++)
		items[i] = (struct stackgroup_item){ .host = "h1", .host_index = 0, .pid = 100 + i,
			.rank = i < 4 ? 3 - i : 0, .t = &t };
	for (i = 5; i < 7; i++)
		items[i] = (struct stackgroup_item){ .host = "h2", .host_index = 1, .pid = 5 + i,
			.rank = -1, .t = &t };
	stackgroup_render(&text, items, 7, false, false);
	ok(text.s != NULL && strstr(text.s, "\n7 threads in 7 processes \u2014 h1: ranks 0\u20133 "
	    "(pids 100\u2013104); h2: pids 10, 11, threads MainThread:\n") != NULL,
	    "a host whose processes all have a RANK names them by rank too");
	sbuf_free(&text);
}

static void
test_bad_records(void)
{
	const char *bad[] = {
		"{\"type\":\"stack\",\"version\":\"x\"}",
		"{\"type\":\"stack\",\"version\":\"x\",\"pid\":1,\"threads\":[{\"frames\":[{\"line\":1}]}]}",
		"{\"type\":\"stack\",\"version\":\"x\",\"pid\":1,\"threads\":[3]}",
	};
	struct jsonrec_process p;
	size_t i;
	int refused = 0;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_t *rec = json_loads(bad[i], 0, NULL);
		char *cause = NULL;

		refused += jsonrec_parse_stack(rec, &p, &cause) != FP_OK && cause != NULL;
		jsonrec_process_clear(&p);
		json_decref(rec);
		free(cause);
	}
	ok(refused == 3, "records without pid, threads or a frame's file are refused");
}

int
main(void)
{
	plan(11);
	test_round_trip();
	test_grouped_across_hosts();
	test_ranks();
	test_bad_records();
	return tap_failed != 0;
}
