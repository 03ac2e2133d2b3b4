/*
 * multireq — one client of a real agent with many requests in flight at
 * once, through core/session's API as the TUI uses it: two long
 * statements (each waits for a file that only this tool creates, so "long"
 * does not depend on timing), and rounds of short requests started all at
 * once while they run, every one asking for a value only it should get.
 * Cancels one long statement and checks the other goes on.
 *
 *     multireq PID TAG DIR ROUNDS
 *
 * TAG (a small number) makes this client's values differ from another
 * client's on the same agent.  Prints what it checked; exit 0 when every
 * answer reached its own request.  The agent must be running already.
 */
#include "config.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/attach.h"
#include "core/session.h"
#include "core/util.h"

#define SHORT_PER_ROUND 6
#define DEADLINE_S 90

/* What one handled request got. */
struct answer {
	const char *what;
	uint64_t id;
	bool ended, ok, error;
	char *kind;		/* of a failed end */
	char *value;		/* getglobal: the value's repr */
	struct sbuf out;	/* execute: output events */
	int events;
};

static int failures;

static void check(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
check(bool cond, const char *fmt, ...)
{
	va_list ap;

	if (cond)
		return;
	failures++;
	printf("FAIL ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void
on_event(void *ctx, uint64_t id, json_t *data)
{
	struct answer *a = ctx;
	const char *text = json_string_value(json_object_get(data, "out"));

	a->events++;
	if (text != NULL)
		sbuf_add(&a->out, text);
}

static void
on_end(void *ctx, uint64_t id, const struct proto_msg *end)
{
	struct answer *a = ctx;
	const char *r = json_string_value(json_object_get(json_object_get(end->data, "value"), "r"));

	if (a->ended)
		check(false, "%s: a second end (%ld)", a->what, (long)id);
	a->ended = true;
	a->ok = end->ok;
	a->kind = end->kind ? xstrdup(end->kind) : NULL;
	a->value = r ? xstrdup(r) : NULL;
}

static void
on_error(void *ctx, uint64_t id, int status, const char *cause)
{
	struct answer *a = ctx;

	a->ended = true;
	a->error = true;
	printf("connection lost for %s: %s\n", a->what, cause);
}

static const struct session_handler handler = {
	.event = on_event, .end = on_end, .error = on_error,
};

static void
answer_clear(struct answer *a)
{
	free(a->kind);
	free(a->value);
	sbuf_free(&a->out);
	memset(a, 0, sizeof *a);
}

static struct session *S;
static uint64_t deadline_ns;

static void
start(const char *cmd, json_t *args, struct answer *a, const char *what)
{
	char *cause = NULL;

	a->what = what;
	if (session_start(S, cmd, args, &handler, a, &a->id, &cause) != FP_OK) {
		printf("FAIL cannot send %s: %s\n", what, cause);
		exit(1);
	}
}

/* Pump the session until *a has ended. */
static void
wait_end(struct answer *a)
{
	char *cause = NULL;

	while (!a->ended) {
		if (now_ns() > deadline_ns) {
			printf("FAIL no end for %s within %d s\n", a->what, DEADLINE_S);
			exit(1);
		}
		if (session_wait(S, 100, &cause) != FP_OK) {
			printf("FAIL session: %s\n", cause);
			exit(1);
		}
	}
}

static json_t *
wait_for_file(const char *path, const char *say)
{
	char code[1024];

	snprintf(code, sizeof code,
	    "import os, time\n"
	    "end = time.monotonic() + %d\n"
	    "while not os.path.exists(%s) and time.monotonic() < end:\n"
	    "    time.sleep(0.02)\n"
	    "print(%s)\n", DEADLINE_S, path, say);
	return json_pack("{s:s}", "code", code);
}

static json_t *
ask_value(long value)
{
	char expr[64];

	/* G_LIST is range(25): the answer is computed in the target. */
	snprintf(expr, sizeof expr, "target[%ld] * 1000000 + %ld", value % 25, value / 25 * 25);
	return json_pack("{s:s, s:s, s:s}", "module", "__main__", "field", "G_LIST", "expr", expr);
}

static long
expect_value(long value)
{
	return (value % 25) * 1000000 + value / 25 * 25;
}

/*
 * One round: SHORT_PER_ROUND getglobal requests and one short execute by
 * handler, one getglobal queued and read last; all in flight at once.
 * Returns the answers that reached their own request.
 */
static int
round_of_shorts(long tag, int round, const struct answer *l1, const struct answer *l2)
{
	struct answer a[SHORT_PER_ROUND + 1];
	struct proto_msg msg;
	char *cause = NULL, want[64], say[80], what[SHORT_PER_ROUND + 1][32];
	long base = tag * 10000 + round * 100;
	uint64_t qid;
	int i, good = 0;

	memset(a, 0, sizeof a);
	if (session_send(S, "getglobal", ask_value(base + 99), &qid, &cause) != FP_OK) {
		printf("FAIL cannot send: %s\n", cause);
		exit(1);
	}
	for (i = 0; i < SHORT_PER_ROUND; i++) {
		snprintf(what[i], sizeof what[i], "short %d.%d", round, i);
		start("getglobal", ask_value(base + i), &a[i], what[i]);
	}
	snprintf(say, sizeof say, "print('client %ld round %d')", tag, round);
	snprintf(what[i], sizeof what[i], "print %d", round);
	start("execute", json_pack("{s:s}", "code", say), &a[i], what[i]);
	for (i = 0; i <= SHORT_PER_ROUND; i++)
		wait_end(&a[i]);
	for (i = 0; i < SHORT_PER_ROUND; i++) {
		snprintf(want, sizeof want, "%ld", expect_value(base + i));
		check(a[i].ok && a[i].value != NULL && strcmp(a[i].value, want) == 0,
		    "%s: wrong answer (value %ld expected)", a[i].what, expect_value(base + i));
		good += a[i].ok && a[i].value != NULL && strcmp(a[i].value, want) == 0;
	}
	snprintf(want, sizeof want, "client %ld round %d\n", tag, round);
	check(a[i].ok && a[i].out.s != NULL && strcmp(a[i].out.s, want) == 0,
	    "%s: wrong output (round %d)", a[i].what, round);
	good += a[i].ok && a[i].out.s != NULL && strcmp(a[i].out.s, want) == 0;
	/* The queued one waited in its own queue while the others were handled. */
	if (session_next(S, qid, DEADLINE_S * 1000, &msg, &cause) != FP_OK || msg.root == NULL ||
	    msg.type != PROTO_END) {
		printf("FAIL queued request: %s\n", cause ? cause : "no end");
		exit(1);
	}
	snprintf(want, sizeof want, "%ld", expect_value(base + 99));
	{
		const char *r = json_string_value(json_object_get(json_object_get(msg.data, "value"), "r"));

		check(msg.ok && r != NULL && strcmp(r, want) == 0, "%s: queued request got a wrong answer "
		    "(value %ld expected)", "getglobal", expect_value(base + 99));
		good += msg.ok && r != NULL && strcmp(r, want) == 0;
	}
	proto_msg_clear(&msg);
	check(!l1->ended, "%s ended during round %d", l1->what, round);
	check(l2 == NULL || !l2->ended, "%s ended during round %d", l2 ? l2->what : "", round);
	for (i = 0; i <= SHORT_PER_ROUND; i++)
		answer_clear(&a[i]);
	return good;
}

int
main(int argc, char **argv)
{
	struct answer l1 = { 0 }, l2 = { 0 };
	char release[4096], never[4096], say[64], *cause = NULL;
	long tag;
	int rounds, r, good = 0, total = 0, fd;

	if (argc != 5) {
		fprintf(stderr, "usage: multireq PID TAG DIR ROUNDS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	tag = atol(argv[2]);
	rounds = atoi(argv[4]);
	deadline_ns = now_ns() + (uint64_t)DEADLINE_S * 1000000000;
	if (attach_agent((pid_t)atol(argv[1]), ATTACH_EXISTING, 0, &S, &cause) != FP_OK) {
		printf("FAIL attach: %s\n", cause);
		return 1;
	}
	snprintf(release, sizeof release, "'%s/release-%ld'", argv[3], tag);
	snprintf(never, sizeof never, "'%s/never-%ld'", argv[3], tag);
	snprintf(say, sizeof say, "'long %ld done'", tag);
	start("execute", wait_for_file(release, say), &l1, "long 1");
	start("execute", wait_for_file(never, "'never'"), &l2, "long 2");

	for (r = 0; r < rounds; r++, total += SHORT_PER_ROUND + 2)
		good += round_of_shorts(tag, r, &l1, &l2);

	/* Cancel the second long statement: only it ends. */
	if (session_cancel(S, l2.id, &cause) != FP_OK) {
		printf("FAIL cancel: %s\n", cause);
		return 1;
	}
	wait_end(&l2);
	check(!l2.ok && l2.kind != NULL && strcmp(l2.kind, "cancelled") == 0,
	    "%s: not ended as cancelled", l2.what);
	check(!l1.ended, "%s ended with the cancel of the other", l1.what);
	printf("client %ld: cancel: long 2 ended %s, long 1 still running: %s\n", tag,
	    l2.kind ? l2.kind : (l2.ok ? "ok" : "?"), l1.ended ? "no" : "yes");
	for (; r < rounds + 2; r++, total += SHORT_PER_ROUND + 2)
		good += round_of_shorts(tag, r, &l1, NULL);

	/* Let the first long statement finish: its output is its own. */
	snprintf(release, sizeof release, "%s/release-%ld", argv[3], tag);
	if ((fd = open(release, O_WRONLY | O_CREAT, 0644)) >= 0)
		close(fd);
	wait_end(&l1);
	snprintf(say, sizeof say, "long %ld done\n", tag);
	check(l1.ok && l1.out.s != NULL && strcmp(l1.out.s, say) == 0,
	    "%s: wrong end or output (client %ld)", l1.what, tag);
	printf("client %ld: %d/%d short answers reached their own request while 2 long "
	    "statements ran\n", tag, good, total);
	printf("client %ld: long 1 ended %s with its own output: %s\n", tag, l1.ok ? "ok" : "failed",
	    l1.out.s != NULL && strcmp(l1.out.s, say) == 0 ? "yes" : "no");
	check(session_pending(S) == 0, "%s: %ld requests still open at the end", "session",
	    (long)session_pending(S));
	answer_clear(&l1);
	answer_clear(&l2);
	session_close(S);
	free(cause);
	printf("%s\n", failures == 0 ? "PASS" : "FAILED");
	return failures == 0 ? 0 : 1;
}
