/*
 * eventrate — events per second from a real agent to the client's output
 * model: a statement in the target emits N small events (one line each)
 * through the agent's own output path; the client pumps its session and
 * feeds every event into a core/textstream (the ring-bounded model the
 * output pane draws).  Next to it, in the same run:
 *
 *   target loop   the same statement with a no-op emitter: what the
 *                 Python loop alone costs in the target;
 *   client model  the same N frames decoded and fed to the model in this
 *                 process, without a socket or an agent.
 *
 *     eventrate PID [N]      (N = 100000; the agent must be loaded)
 *
 * Prints rates, ratios and the budget (>= 50,000 events/s); not pass/fail.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/attach.h"
#include "core/protocol.h"
#include "core/session.h"
#include "core/textstream.h"
#include "core/util.h"

#define BUDGET 50000.0

struct run {
	struct textstream *model;
	uint64_t events;
	bool ended, ok;
	char *why;
};

static void
on_event(void *ctx, uint64_t id, json_t *data)
{
	struct run *r = ctx;
	json_t *out = json_object_get(data, "out");

	r->events++;
	if (json_is_string(out))
		textstream_add(r->model, json_string_value(out), json_string_length(out));
}

static void
on_end(void *ctx, uint64_t id, const struct proto_msg *end)
{
	struct run *r = ctx;

	r->ended = true;
	r->ok = end->ok;
	if (!end->ok)
		r->why = xstrdup(end->error ? end->error : "failed");
}

static void
on_error(void *ctx, uint64_t id, int status, const char *cause)
{
	struct run *r = ctx;

	r->ended = true;
	r->why = xstrdup(cause);
}

static const struct session_handler handler = { on_event, on_end, on_error };

/* The statement: N events through the capture's own emitter, or a no-op. */
static char *
statement(long n, bool noop)
{
	return xasprintf("import sys, _thread\n"
	    "emit = %s\n"
	    "for i in range(%ld):\n"
	    "    emit('event %%d\\n' %% i)\n",
	    noop ? "lambda text: None" :
	    "sys.stdout.write.__globals__['_captures'][_thread.get_ident()].emit", n);
}

/* Run one statement; seconds from send to end, or < 0. */
static double
timed(struct session *s, long n, bool noop, struct run *r)
{
	char *code = statement(n, noop), *cause = NULL;
	uint64_t id, t0 = now_ns();

	memset(r, 0, sizeof *r);
	r->model = textstream_new(10000, 1 << 20);
	if (session_start(s, "execute", json_pack("{s:s}", "code", code), &handler, r, &id,
	    &cause) != FP_OK) {
		fprintf(stderr, "eventrate: %s\n", cause);
		exit(1);
	}
	free(code);
	while (!r->ended) {
		if (session_wait(s, 100, &cause) != FP_OK) {
			fprintf(stderr, "eventrate: %s\n", cause);
			exit(1);
		}
	}
	if (!r->ok) {
		fprintf(stderr, "eventrate: the statement failed: %s\n", r->why);
		exit(1);
	}
	return (double)(now_ns() - t0) / 1e9;
}

/* The client side alone: n event frames decoded and fed to the model. */
static double
client_only(long n)
{
	struct textstream *model = textstream_new(10000, 1 << 20);
	struct proto_decoder dec;
	struct proto_msg msg;
	struct sbuf frames = { 0 };
	unsigned char *frame;
	char err[200], text[64];
	size_t len;
	uint64_t t0;
	long i;

	for (i = 0; i < n; i++) {
		snprintf(text, sizeof text, "event %ld\n", i);
		json_t *m = proto_new_event(3, json_pack("{s:s}", "out", text));

		proto_encode(m, PROTO_MAX_TO_CLIENT, &frame, &len, err, sizeof err);
		sbuf_addn(&frames, (const char *)frame, len);
		free(frame);
		json_decref(m);
	}
	proto_decoder_init(&dec, PROTO_MAX_TO_CLIENT);
	t0 = now_ns();
	for (size_t off = 0; off < frames.len; off += 65536) {
		size_t chunk = frames.len - off < 65536 ? frames.len - off : 65536;

		proto_decoder_feed(&dec, frames.s + off, chunk);
		while (proto_decoder_next(&dec, &msg, err, sizeof err) == 1) {
			json_t *out = json_object_get(msg.data, "out");

			textstream_add(model, json_string_value(out), json_string_length(out));
			proto_msg_clear(&msg);
		}
	}
	double secs = (double)(now_ns() - t0) / 1e9;

	proto_decoder_free(&dec);
	sbuf_free(&frames);
	textstream_free(model);
	return secs;
}

int
main(int argc, char **argv)
{
	struct session *s;
	struct run r;
	char *cause = NULL;
	long n = argc > 2 ? atol(argv[2]) : 100000;
	double e2e, loop, model;

	if (argc < 2) {
		fprintf(stderr, "usage: eventrate PID [N]\n");
		return 2;
	}
	if (attach_agent((pid_t)atol(argv[1]), ATTACH_EXISTING, 0, &s, &cause) != FP_OK) {
		fprintf(stderr, "eventrate: %s\n", cause);
		return 1;
	}
	timed(s, 1000, false, &r);	/* warm up: the helper, the first worker */
	textstream_free(r.model);
	free(r.why);

	loop = timed(s, n, true, &r);
	textstream_free(r.model);
	e2e = timed(s, n, false, &r);
	model = client_only(n);
	printf("events: %ld small events (one line each), agent -> session -> output model\n", n);
	printf("  received %llu events, model holds %zu lines, dropped %llu (ring bound 10,000)\n",
	    (unsigned long long)r.events, ring_count(textstream_ring(r.model)),
	    (unsigned long long)textstream_dropped(r.model));
	printf("  end to end:    %8.3f s  %10.0f events/s   budget >= %.0f/s: %s (x%.2f)\n", e2e,
	    n / e2e, BUDGET, n / e2e >= BUDGET ? "within" : "OVER", (n / e2e) / BUDGET);
	printf("  target loop:   %8.3f s  %10.0f events/s   (no-op emitter; e2e/loop time x%.2f)\n",
	    loop, n / loop, e2e / loop);
	printf("  client model:  %8.3f s  %10.0f events/s   (decode + model only; e2e/model time x%.2f)\n",
	    model, n / model, e2e / model);
	textstream_free(r.model);
	free(r.why);
	session_close(s);
	return r.events == (uint64_t)n ? 0 : 1;
}
