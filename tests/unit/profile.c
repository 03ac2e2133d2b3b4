/*
 * profile.c — a sampler's samples folded into a profile (core/profile).
 * Python-only samples take a one-pass path that reuses the last sample's
 * nodes; samples with a process root take the general one.  Both must fold
 * the same stacks into the same tree: random stacks over a few functions
 * (frames with and without a code id, a function met again at another
 * depth, paths that share a prefix and then differ), folded both ways,
 * give the same collapsed lines, and those count every sample.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/profile.h"
#include "core/sampler.h"
#include "tests/unit/tap.h"

#define NFUNCS	6
#define SAMPLES	20000
#define MAXDEPTH 12

static struct py_frame funcs[NFUNCS] = {
	{ .filename = "app.py", .name = "main", .code_id = 11 },
	{ .filename = "app.py", .name = "serve", .code_id = 12 },
	{ .filename = "app.py", .name = "handle", .code_id = 13 },
	{ .filename = "lib.py", .name = "parse", .code_id = 14 },
	{ .filename = "lib.py", .name = "unknown_id", .code_id = 0 },
	{ .filename = "lib.py", .name = "leaf", .code_id = 15 },
};

static unsigned long long rng = 88172645463325252ull;

static unsigned
next(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* A stack: a prefix of the last one most of the time, as a sampler sees. */
static size_t
make_stack(struct py_frame *frames, size_t last)
{
	size_t keep = last > 0 && next(4) != 0 ? next((unsigned)last + 1) : 0, n, i;

	if (keep >= MAXDEPTH)
		keep = MAXDEPTH - 1;
	n = keep + 1 + next(MAXDEPTH - (unsigned)keep);
	/* frames[] is innermost first: keep the outermost `keep` of the last */
	memmove(frames + (n - keep), frames + (last - keep), keep * sizeof *frames);
	for (i = 0; i < n - keep; i++)
		frames[i] = funcs[next(NFUNCS)];
	return n;
}

static char *
collapsed(const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	profile_write_collapsed(p, f);
	fclose(f);
	return buf;
}

/* The lines of b with "proc;" taken off their front. */
static char *
without_root(const char *b)
{
	char *out = malloc(strlen(b) + 1), *o = out;
	const char *line = b;

	while (*line != '\0') {
		const char *end = strchr(line, '\n');
		size_t n = end != NULL ? (size_t)(end - line) + 1 : strlen(line);

		if (strncmp(line, "proc;", 5) == 0) {
			line += 5;
			n -= 5;
		}
		memcpy(o, line, n);
		o += n;
		line += n;
	}
	*o = '\0';
	return out;
}

static unsigned long
counted(const char *b)
{
	unsigned long sum = 0;
	const char *line = b;

	while (*line != '\0') {
		const char *end = strchr(line, '\n'), *sp;

		end = end != NULL ? end : line + strlen(line);
		for (sp = end; sp > line && sp[-1] != ' '; sp--)
			;
		sum += strtoul(sp, NULL, 10);
		line = *end != '\0' ? end + 1 : end;
	}
	return sum;
}

int
main(void)
{
	struct profile *fast = profile_new(false), *general = profile_new(false);
	struct py_frame frames[MAXDEPTH];
	struct py_thread t = { .tid = 7, .name = "main", .frames = frames };
	size_t i, n = 0;
	char *a, *b, *b_stripped;

	for (i = 0; i < SAMPLES; i++) {
		struct sample s = { .time_ns = i, .weight_ns = 1000, .thread = &t };

		n = make_stack(frames, n);
		t.nframes = n;
		profile_add(fast, &s);
		profile_add_in(general, "proc", &s);
	}
	a = collapsed(fast);
	b = collapsed(general);
	b_stripped = without_root(b);
	ok(strlen(a) > 0 && strcmp(a, b_stripped) == 0,
	    "Python-only samples fold as through the general path");
	ok(counted(a) == SAMPLES, "the collapsed lines count every sample (%lu of %d)",
	    counted(a), SAMPLES);
	free(a);
	free(b);
	free(b_stripped);
	profile_free(fast);
	profile_free(general);
	return done_testing();
}
