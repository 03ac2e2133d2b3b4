/*
 * Unit tests of core/protocol: frames in and out, split anywhere, and every
 * kind of bad input refused with a message instead of a crash.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/protocol.h"
#include "core/util.h"
#include "tests/unit/tap.h"

static unsigned char *
frame_of(const char *json, size_t *len)
{
	size_t n = strlen(json);
	unsigned char *f = malloc(n + 4);

	f[0] = (unsigned char)(n >> 24);
	f[1] = (unsigned char)(n >> 16);
	f[2] = (unsigned char)(n >> 8);
	f[3] = (unsigned char)n;
	memcpy(f + 4, json, n);
	*len = n + 4;
	return f;
}

/* Decode one raw JSON text as a frame: the decoder's verdict (1, 0, -1). */
static int
decode_json(const char *json, struct proto_msg *msg, char *err, size_t errlen)
{
	struct proto_decoder d;
	unsigned char *f;
	size_t len;
	int rc;

	f = frame_of(json, &len);
	proto_decoder_init(&d, PROTO_MAX_TO_AGENT);
	proto_decoder_feed(&d, f, len);
	rc = proto_decoder_next(&d, msg, err, errlen);
	free(f);
	proto_decoder_free(&d);
	return rc;
}

static int
refused(const char *json, const char *why_contains)
{
	struct proto_msg msg;
	char err[200] = "";
	int rc = decode_json(json, &msg, err, sizeof err);

	if (rc == 1)
		proto_msg_clear(&msg);
	return rc == -1 && strstr(err, why_contains) != NULL;
}

int
main(void)
{
	struct proto_decoder d;
	struct proto_msg msg;
	unsigned char *f, *f2, big[8];
	size_t len, len2, i;
	char err[200];
	json_t *req;
	int rc, got;

	plan(28);

	/* Round trip of a request. */
	req = proto_new_request(7, "getglobal", json_pack("{s:s, s:i}", "module", "__main__", "depth", 2));
	ok(proto_encode(req, PROTO_MAX_TO_AGENT, &f, &len, err, sizeof err) == 0, "encode a request");
	json_decref(req);
	proto_decoder_init(&d, PROTO_MAX_TO_AGENT);
	proto_decoder_feed(&d, f, len);
	rc = proto_decoder_next(&d, &msg, err, sizeof err);
	ok(rc == 1 && msg.type == PROTO_REQUEST && msg.id == 7, "decode it back");
	ok(rc == 1 && strcmp(msg.cmd, "getglobal") == 0 &&
	    json_integer_value(json_object_get(msg.args, "depth")) == 2, "command and arguments survive");
	proto_msg_clear(&msg);
	ok(proto_decoder_next(&d, &msg, err, sizeof err) == 0 && proto_decoder_pending(&d) == 0,
	    "nothing left");

	/* Byte by byte, two frames back to back. */
	req = proto_new_end_ok(9, json_pack("{s:s}", "out", "h\xc3\xa9llo"));
	proto_encode(req, PROTO_MAX_TO_CLIENT, &f2, &len2, err, sizeof err);
	json_decref(req);
	got = 0;
	for (i = 0; i < len + len2; i++) {
		unsigned char b = i < len ? f[i] : f2[i - len];

		proto_decoder_feed(&d, &b, 1);
		while ((rc = proto_decoder_next(&d, &msg, err, sizeof err)) == 1) {
			got++;
			proto_msg_clear(&msg);
		}
		if (rc < 0)
			break;
	}
	ok(got == 2 && rc == 0, "two frames fed one byte at a time decode as two messages");
	proto_decoder_free(&d);
	free(f);
	free(f2);

	/* Many frames per feed, cut anywhere: all of them, in order, once. */
	{
		struct sbuf all = { 0 };
		uint64_t want = 1;
		bool inorder = true;
		size_t off;

		for (i = 1; i <= 5000; i++) {
			req = proto_new_event(i, json_pack("{s:s}", "out", "line\n"));
			proto_encode(req, PROTO_MAX_TO_CLIENT, &f, &len, err, sizeof err);
			json_decref(req);
			sbuf_addn(&all, (const char *)f, len);
			free(f);
		}
		proto_decoder_init(&d, PROTO_MAX_TO_CLIENT);
		for (off = 0; off < all.len; off += 7777) {
			proto_decoder_feed(&d, all.s + off, all.len - off < 7777 ? all.len - off : 7777);
			while (proto_decoder_next(&d, &msg, err, sizeof err) == 1) {
				inorder = inorder && msg.id == want;
				want++;
				proto_msg_clear(&msg);
			}
		}
		ok(inorder && want == 5001 && proto_decoder_pending(&d) == 0,
		    "5,000 frames fed in 7,777-byte pieces decode in order, nothing left (%llu)",
		    (unsigned long long)want - 1);
		proto_decoder_free(&d);
		sbuf_free(&all);
	}

	/* End messages. */
	rc = decode_json("{\"t\":\"end\",\"id\":3,\"ok\":false,\"error\":\"boom\",\"kind\":\"raised\"}",
	    &msg, err, sizeof err);
	ok(rc == 1 && !msg.ok && strcmp(msg.error, "boom") == 0 && strcmp(msg.kind, "raised") == 0,
	    "failed end with error and kind");
	if (rc == 1)
		proto_msg_clear(&msg);
	rc = decode_json("{\"t\":\"req\",\"id\":1,\"cmd\":\"x\"}", &msg, err, sizeof err);
	ok(rc == 1 && json_is_object(msg.args) && json_object_size(msg.args) == 0,
	    "absent arguments become an empty object");
	if (rc == 1)
		proto_msg_clear(&msg);
	rc = decode_json("{\"t\":\"hello\",\"proto\":1}", &msg, err, sizeof err);
	ok(rc == 1 && msg.type == PROTO_HELLO, "hello");
	if (rc == 1)
		proto_msg_clear(&msg);

	/* Refusals. */
	ok(refused("[1,2]", "object"), "a JSON array is refused");
	ok(refused("{\"t\":1}", "type"), "a non-string type is refused");
	ok(refused("{\"t\":\"bogus\",\"id\":1}", "unknown message type"), "unknown type");
	ok(refused("{\"t\":\"req\",\"id\":1}", "without a command"), "request without a command");
	ok(refused("{\"t\":\"req\",\"id\":0,\"cmd\":\"x\"}", "out of range"), "id 0");
	ok(refused("{\"t\":\"req\",\"id\":-4,\"cmd\":\"x\"}", "out of range"), "negative id");
	ok(refused("{\"t\":\"req\",\"id\":9007199254740993,\"cmd\":\"x\"}", "out of range"), "id above 2^53");
	ok(refused("{\"t\":\"req\",\"id\":1.5,\"cmd\":\"x\"}", "integer id"), "fractional id");
	ok(refused("{\"t\":\"req\",\"id\":1,\"cmd\":\"x\",\"args\":[]}", "must be an object"),
	    "arguments not an object");
	ok(refused("{\"t\":\"req\",\"id\":1,\"id\":2,\"cmd\":\"x\"}", "valid JSON"), "duplicate keys");
	ok(refused("{\"t\":\"req\",\"id\":1,\"cmd\":\"\xff\xfe\"}", "valid JSON"), "invalid UTF-8");
	ok(refused("{\"t\":\"req\",\"id\":1,\"cmd\":\"x\"", "valid JSON"), "truncated JSON");
	ok(refused("{\"t\":\"end\",\"id\":1,\"ok\":false}", "without an error"), "failed end without text");
	ok(refused("{\"t\":\"hello\"}", "protocol version"), "hello without version");

	/* Frame headers. */
	proto_decoder_init(&d, 1000);
	memset(big, 0, sizeof big);
	big[1] = 0x10;		/* 1 MiB */
	proto_decoder_feed(&d, big, 4);
	rc = proto_decoder_next(&d, &msg, err, sizeof err);
	ok(rc == -1 && strstr(err, "exceeds") != NULL, "oversized frame refused from its header: %s", err);
	ok(proto_decoder_feed(&d, big, 4) == -1 && proto_decoder_next(&d, &msg, err, sizeof err) == -1,
	    "a failed decoder stays failed");
	proto_decoder_free(&d);
	proto_decoder_init(&d, 1000);
	memset(big, 0, sizeof big);
	proto_decoder_feed(&d, big, 4);
	ok(proto_decoder_next(&d, &msg, err, sizeof err) == -1 && strstr(err, "empty") != NULL,
	    "empty frame refused");
	proto_decoder_free(&d);

	/* Encoding limits. */
	req = json_pack("{s:s, s:i, s:s}", "t", "ev", "id", 1, "pad", "0123456789012345678901234567890123456789");
	ok(proto_encode(req, 20, &f, &len, err, sizeof err) == -1 && strstr(err, "exceeds") != NULL,
	    "encoding refuses a message over the limit");
	json_decref(req);
	req = proto_new_end_error(5, "raised", "bad \xff utf-8");
	ok(req != NULL && strstr(json_string_value(json_object_get(req, "error")), "UTF-8") != NULL,
	    "an error text that is not UTF-8 is replaced, not dropped");
	json_decref(req);
	return tap_failed ? 1 : 0;
}
