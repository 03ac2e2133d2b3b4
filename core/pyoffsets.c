#include "config.h"

#include "core/pyoffsets.h"

#include <stdio.h>
#include <string.h>

const struct py_offsets *
py_offsets_find(uint32_t version_hex, int *exact)
{
	const struct py_offsets *best = NULL;
	uint32_t want_minor = version_hex >> 16, want_micro = (version_hex >> 8) & 0xff;
	unsigned best_dist = ~0u;
	size_t i;

	*exact = 0;
	for (i = 0; i < py_offsets_table_len; i++) {
		const struct py_offsets *o = py_offsets_table[i];
		uint32_t micro = (o->version_hex >> 8) & 0xff;
		unsigned dist;

		if ((o->version_hex >> 16) != want_minor)
			continue;
		dist = micro > want_micro ? micro - want_micro : want_micro - micro;
		if (dist < best_dist) {
			best = o;
			best_dist = dist;
		}
	}
	if (best != NULL && best_dist == 0)
		*exact = 1;
	return best;
}

const char *
py_offsets_known_versions(void)
{
	static char buf[256];
	size_t i, len = 0;

	if (buf[0] != '\0')
		return buf;
	for (i = 0; i < py_offsets_table_len && len + 16 < sizeof buf; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
		    len ? " " : "", py_offsets_table[i]->version);
	return buf;
}

/* The bytes from a thread state's start that hold every field of used[]. */
static size_t
tstate_span_of(const struct py_offsets *o, const int64_t *used, size_t n)
{
	int64_t end = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (used[i] != PYOFF_NONE && used[i] + 8 > end)
			end = used[i] + 8;
	if (end > o->tstate_size)
		end = o->tstate_size;
	return end < PYOFF_TSTATE_SPAN ? (size_t)end : PYOFF_TSTATE_SPAN;
}

size_t
py_offsets_tstate_used(const struct py_offsets *o)
{
	const int64_t used[] = {
		o->tstate_prev, o->tstate_next, o->tstate_interp, o->tstate_frame, o->tstate_cframe,
		o->tstate_thread_id, o->tstate_native_thread_id, o->tstate_datastack_chunk,
		o->tstate_datastack_top,
	};

	return tstate_span_of(o, used, sizeof used / sizeof used[0]);
}

size_t
py_offsets_tstate_head_used(const struct py_offsets *o)
{
	const int64_t used[] = {
		o->tstate_prev, o->tstate_next, o->tstate_interp, o->tstate_frame, o->tstate_cframe,
		o->tstate_thread_id, o->tstate_native_thread_id,
	};

	return tstate_span_of(o, used, sizeof used / sizeof used[0]);
}
