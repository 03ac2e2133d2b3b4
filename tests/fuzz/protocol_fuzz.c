/*
 * libFuzzer target for the protocol decoder (core/protocol.c): the bytes a
 * client can send to the agent.  The first input byte chooses how the rest
 * is split into reads, so frames straddle read boundaries as on a socket.
 * Every decoded message is re-encoded and decoded again (round trip).
 *
 *   make fuzz                    (tests/fuzz/run.sh, FUZZ_SECONDS=60)
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
round_trip(const struct proto_msg *msg)
{
	struct proto_decoder d;
	struct proto_msg again;
	unsigned char *frame;
	size_t len;
	char err[200];

	if (proto_encode(msg->root, PROTO_MAX_TO_AGENT, &frame, &len, err, sizeof err) != 0)
		return;
	proto_decoder_init(&d, PROTO_MAX_TO_AGENT);
	proto_decoder_feed(&d, frame, len);
	if (proto_decoder_next(&d, &again, err, sizeof err) != 1)
		abort();	/* what we encode, we must decode */
	if (again.type != msg->type || again.id != msg->id)
		abort();
	proto_msg_clear(&again);
	proto_decoder_free(&d);
	free(frame);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_decoder d;
	struct proto_msg msg;
	size_t chunk, off = 0, n;
	char err[200];
	int rc = 0;

	if (size == 0)
		return 0;
	chunk = (size_t)data[0] % 64 + 1;
	data++;
	size--;
	/* A small limit, so that the size checks are reached quickly. */
	proto_decoder_init(&d, 4096);
	while (off < size && rc >= 0) {
		n = size - off < chunk ? size - off : chunk;
		if (proto_decoder_feed(&d, data + off, n) != 0)
			break;
		off += n;
		while ((rc = proto_decoder_next(&d, &msg, err, sizeof err)) == 1) {
			round_trip(&msg);
			proto_msg_clear(&msg);
		}
	}
	proto_decoder_free(&d);
	return 0;
}
