#include "config.h"

#include "core/linetable.h"

#include <limits.h>
#include <stdbool.h>

/*
 * Lines add up in 64 bits: a code object read torn (the sampler does not
 * stop the target) may carry any firstlineno, and a signed int overflow
 * is undefined.  A sum out of an int's range is no line: 0.
 */
static int
line_of(int64_t line)
{
	return line >= INT_MIN && line <= INT_MAX ? (int)line : 0;
}

/* 3.8–3.9: Objects/lnotab_notes.txt */
static int
lnotab_line(const uint8_t *p, size_t len, int64_t line, int64_t addrq)
{
	int64_t addr = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		addr += p[i];
		if (addr > addrq)
			break;
		line += (int8_t)p[i + 1];
	}
	return line_of(line);
}

/* 3.10: Objects/lnotab_notes.txt, the "linetable" format. */
static int
linetable310_line(const uint8_t *p, size_t len, int64_t line, int64_t addrq)
{
	int64_t start = 0, end = 0, computed = line, ar_line = -1;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		start = end;
		end += p[i];
		if ((int8_t)p[i + 1] == -128) {
			ar_line = -1;
		} else {
			computed += (int8_t)p[i + 1];
			ar_line = computed;
		}
		if (start <= addrq && addrq < end)
			return ar_line < 0 ? 0 : line_of(ar_line);
	}
	return 0;
}

static bool
read_varint(const uint8_t **pp, const uint8_t *limit, unsigned *out)
{
	const uint8_t *p = *pp;
	unsigned val, shift = 0;
	uint8_t b;

	if (p >= limit)
		return false;
	b = *p++;
	val = b & 63;
	while (b & 64) {
		if (p >= limit || shift > 24)
			return false;
		b = *p++;
		shift += 6;
		val |= (unsigned)(b & 63) << shift;
	}
	*pp = p;
	*out = val;
	return true;
}

static bool
read_svarint(const uint8_t **pp, const uint8_t *limit, int *out)
{
	unsigned u;

	if (!read_varint(pp, limit, &u))
		return false;
	*out = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
	return true;
}

/* 3.11+: Objects/locations.md */
static int
locations_line(const uint8_t *p, size_t len, int64_t line, int64_t addrq)
{
	const uint8_t *limit = p + len;
	int64_t start, end = 0, computed = line;

	while (p < limit) {
		uint8_t b = *p;
		unsigned code = (b >> 3) & 15;
		int delta = 0;
		int64_t ar_line;
		const uint8_t *q = p + 1;

		if (!(b & 128))
			return 0;	/* corrupt: not at an entry start */
		start = end;
		end += ((b & 7) + 1) * 2;
		if (code == 14 || code == 13) {
			if (!read_svarint(&q, limit, &delta))
				return 0;
		} else if (code >= 10 && code <= 12) {
			delta = (int)code - 10;
		}
		if (code == 15) {
			ar_line = -1;
		} else {
			computed += delta;
			ar_line = computed;
		}
		if (start <= addrq && addrq < end)
			return ar_line < 0 ? 0 : line_of(ar_line);
		/* The next entry starts at the next byte with the top bit set. */
		p++;
		while (p < limit && !(*p & 128))
			p++;
	}
	return 0;
}

int
linetable_line(uint32_t version_hex, const uint8_t *table, size_t len,
    int firstlineno, int64_t addrq)
{
	if (addrq < 0)
		return firstlineno;
	if (version_hex >= 0x030B0000)
		return locations_line(table, len, firstlineno, addrq);
	if (version_hex >= 0x030A0000)
		return linetable310_line(table, len, firstlineno, addrq);
	return lnotab_line(table, len, firstlineno, addrq);
}
