/*
 * memlive — the mem pane's model: the history of `mem` live samples (per
 * type: the latest count and size, the baseline the growth is measured
 * from, the last MEMLIVE_TREND sizes for the trend) and the requests the
 * pane sends on the agent's session (the live stream, `mem sites`, a few
 * instances of a type as `vmtool -a getInstances`), their answers handed
 * over as core/model.h's structs or rendered text, never JSON.
 *
 * Type names, file names and instance text come from the target: they are
 * kept as it wrote them, and escaped by whoever draws them (tui/draw).
 * Nothing here blocks: answers arrive through session_pump.
 */
#ifndef FP_MEMLIVE_H
#define FP_MEMLIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "core/model_torch.h"
#include "core/session.h"

#define MEMLIVE_TREND 8		/* samples the trend shows */

struct memlive_type {
	char *type;			/* "module.Qualname" */
	long long count, size;		/* the latest sample (0: absent from it) */
	long long base_count, base_size;	/* at the baseline (0: not there yet) */
	long long trend[MEMLIVE_TREND];	/* sizes, oldest first; the last is the latest */
	unsigned ntrend;		/* samples in trend */
};

enum memlive_kind { MEMLIVE_LIVE, MEMLIVE_SITES, MEMLIVE_INSTANCES, MEMLIVE_TORCH, MEMLIVE__KINDS };

struct memlive;

/* What answers, on the pane's side (called from session_pump). */
struct memlive_handler {
	/* A sample arrived and is in the history (the live stream). */
	void (*sample)(void *ctx, struct memlive *m);
	/* A `mem sites` answer (taken over: free with mem_sites_free). */
	void (*sites)(void *ctx, struct mem_sites *s);
	/* Instances as vmtool prints them (the target's text, not escaped). */
	void (*text)(void *ctx, const char *text);
	/* `torch modules`: the hooks are in, on `modules` modules (the steps are awaited). */
	void (*torch_hooked)(void *ctx, long long modules);
	/* `torch modules` ended with its table (taken over: torch_modules_free). */
	void (*torch)(void *ctx, struct torch_modules *t);
	/* A request of `kind` failed or the connection broke: why. */
	void (*error)(void *ctx, enum memlive_kind kind, const char *cause);
};

struct memlive_req {
	struct memlive *m;
	enum memlive_kind kind;
	struct session *s;		/* where it was sent */
	uint64_t id;
	bool busy;
	char *what;			/* MEMLIVE_SITES: "start", "diff", "stop" */
};

struct memlive {
	struct memlive_type *types;
	size_t ntypes, atypes;
	size_t *slots;			/* hash of types by name: index + 1, 0 empty */
	size_t nslots;
	long long samples;		/* received so far */
	long long base_sample;		/* the sample the growth is measured from */
	struct mem_scan_info scan;	/* the latest sample's */
	double interval;
	bool frozen;			/* samples that arrive are dropped */
	const struct memlive_handler *h;
	void *ctx;
	struct memlive_req req[MEMLIVE__KINDS];
};

struct memlive *memlive_new(const struct memlive_handler *h, void *ctx);
/*
 * Cancel what runs (if `s` is still the session it was sent on: the
 * agent then ends it; a closed session ended it already) and free.
 */
void memlive_free(struct memlive *m, struct session *s);

/* Fold one sample into the history (the stream does; benchmarks too). */
void memlive_add(struct memlive *m, const struct mem_table *t);
/* memlive_add, then tell the handler, as when a sample arrives (benchmarks feed it so). */
void memlive_feed(struct memlive *m, const struct mem_table *t);
/* Measure the growth from the latest sample on. */
void memlive_rebase(struct memlive *m);

/*
 * Start the live stream: a summary of every type each `interval` s (a
 * running one is replaced).  An fp_status.
 */
int memlive_start(struct memlive *m, struct session *s, double interval, char **cause);
/* Cancel the stream (its end still comes, and is ignored). */
void memlive_stop(struct memlive *m, struct session *s);
bool memlive_running(const struct memlive *m, enum memlive_kind kind);
/* `mem sites start|diff|stop`, on this connection (start: `frames` frames). */
int memlive_sites(struct memlive *m, struct session *s, const char *what, int frames,
    char **cause);
/*
 * Up to `n` instances of type `type` ("module.Qualname", builtins without
 * a dot) as `vmtool -a getInstances -c module class -n n` shows them.
 */
int memlive_instances(struct memlive *m, struct session *s, const char *type, int n,
    char **cause);

/*
 * `torch modules -n steps`: hooks on the program's nn.Module tree for that
 * many steps (up to `timeout` s), then removed; the table comes to the
 * handler's torch().  A target without torch imported fails it (error()),
 * and nothing is imported or hooked.
 */
int memlive_torch(struct memlive *m, struct session *s, int steps, double timeout, char **cause);
/* Cancel a running `torch modules`: the agent removes its hooks; no table comes. */
void memlive_torch_cancel(struct memlive *m, struct session *s);

#endif
