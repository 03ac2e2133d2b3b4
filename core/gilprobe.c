#include "config.h"

#include "core/gilprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/elfimage.h"
#include "core/procfs.h"
#include "core/util.h"

#define UPROBE_PMU	"/sys/bus/event_source/devices/uprobe"
/* Data pages of one thread's ring buffer (a power of two): ~1,000 events. */
#define RING_PAGES	8
/* More threads than this at open: sample instead (fds and locked memory). */
#define MAX_THREADS	1024
#define MAX_SITES	8

/*
 * The copies of take_gil/drop_gil a compiler may leave: gcc clones a
 * static function with constant arguments (3.8's libpython has both
 * take_gil and take_gil.constprop.0, each called).  A ".part.N" piece is
 * not probed: its entry is not the function's.
 */
static const char *const suffixes[] = { "", ".constprop.0", ".constprop.1", ".isra.0" };

struct site {
	uint64_t offset;	/* in the file */
	bool take;		/* take_gil, else drop_gil */
};

struct ring {
	pid_t tid;
	int leader;		/* the fd the buffer is mapped on */
	void *base;		/* metadata page, then RING_PAGES data pages */
	int *fds;		/* every event of this thread (leader first) */
	size_t nfds;
};

struct id_kind {
	uint64_t id;
	enum gilprobe_kind kind;
};

struct gilprobe {
	pid_t pid;
	char *path;		/* /proc/<pid>/root/..., handed to the kernel */
	struct site sites[MAX_SITES];
	size_t nsites;
	struct ring *rings;
	size_t nrings, arings;
	struct id_kind *ids;
	size_t nids, aids;
	size_t page;
	int type;		/* the uprobe PMU */
	uint64_t retbit;	/* its config bit for a return probe */
	uint64_t lost;
	size_t apfds;
	char *describe;
	struct pollfd *pfds;
};

static int
read_sysfs_int(const char *path, const char *prefix, long *v)
{
	char *s = read_file_str(path, NULL);
	int ok = 0;

	if (s == NULL)
		return 0;
	if (strncmp(s, prefix, strlen(prefix)) == 0) {
		*v = strtol(s + strlen(prefix), NULL, 10);
		ok = 1;
	}
	free(s);
	return ok;
}

/* File offset of link-time address `vaddr`, through the PT_LOAD holding it. */
static bool
file_offset(struct elf_image *img, uint64_t vaddr, uint64_t *off)
{
	const struct elf_segment *seg;
	size_t n, i;

	seg = elf_image_segments(img, &n);
	for (i = 0; i < n; i++)
		if (seg[i].exec && vaddr >= seg[i].vaddr && vaddr < seg[i].vaddr + seg[i].filesz) {
			*off = vaddr - seg[i].vaddr + seg[i].offset;
			return true;
		}
	return false;
}

static int
find_sites(struct gilprobe *gp, const char *binary, char **cause)
{
	static const char *const bases[] = { "take_gil", "drop_gil" };
	struct elf_image *img = NULL;
	size_t b, k, found[2] = { 0, 0 };
	uint64_t value, size, off;
	char name[64];
	int rc;

	if ((rc = elf_image_open(gp->path, &img, cause)) != FP_OK)
		return rc;
	for (b = 0; b < 2; b++)
		for (k = 0; k < FP_NELEM(suffixes); k++) {
			snprintf(name, sizeof name, "%s%s", bases[b], suffixes[k]);
			if (!elf_image_symbol(img, name, &value, &size) || value == 0 ||
			    !file_offset(img, value, &off) || gp->nsites == MAX_SITES)
				continue;
			gp->sites[gp->nsites].offset = off;
			gp->sites[gp->nsites++].take = b == 0;
			found[b]++;
		}
	elf_image_close(img);
	if (found[0] == 0 || found[1] == 0)
		return fail(cause, FP_ERR, "%s has no take_gil/drop_gil symbols (stripped: no "
		    ".symtab)", binary);
	return FP_OK;
}

static int
open_event(struct gilprobe *gp, const struct site *site, bool ret, pid_t tid)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = (uint32_t)gp->type;
	attr.config = ret ? gp->retbit : 0;
	attr.config1 = (uint64_t)(uintptr_t)gp->path;
	attr.config2 = site->offset;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.watermark = 1;
	attr.wakeup_watermark = (uint32_t)(RING_PAGES * gp->page / 4);
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int
open_error(struct gilprobe *gp, int err, pid_t tid, char **cause)
{
	if (err == ESRCH)
		return FP_OK;	/* the thread ended meanwhile */
	if (err == EACCES || err == EPERM)
		return fail(cause, FP_EPERM, "perf_event_open refused (%s): uprobes need "
		    "CAP_PERFMON or CAP_SYS_ADMIN (root has both)", strerror(err));
	return fail(cause, FP_ERR, "perf_event_open of a uprobe in %s for thread %d failed: %s",
	    gp->path, (int)tid, strerror(err));
}

static void
ring_close(struct gilprobe *gp, struct ring *r)
{
	size_t k;

	if (r->base != NULL)
		munmap(r->base, (RING_PAGES + 1) * gp->page);
	for (k = 0; k < r->nfds; k++)
		close(r->fds[k]);
	free(r->fds);
}

/* Map the buffer on the first event of a thread; the others write into it. */
static int
attach_fd(struct gilprobe *gp, struct ring *r, int fd, char **cause)
{
	r->fds[r->nfds++] = fd;
	if (r->leader >= 0) {
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->leader) != 0)
			return fail(cause, FP_ERR, "perf SET_OUTPUT failed: %s", strerror(errno));
		return FP_OK;
	}
	r->leader = fd;
	r->base = mmap(NULL, (RING_PAGES + 1) * gp->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return fail(cause, FP_ERR, "cannot map a perf ring buffer: %s", strerror(errno));
	}
	return FP_OK;
}

/*
 * Every probe for one thread, into one ring buffer.  Per thread, not
 * inherited: the kernel maps no buffer of an inherited per-thread event,
 * so threads started later are found by gilprobe_poll's rescan.
 */
static int
open_thread(struct gilprobe *gp, pid_t tid, char **cause)
{
	struct ring r = { .tid = tid, .leader = -1 };
	size_t s, ret;
	int fd, rc = FP_OK;

	r.fds = xcalloc(gp->nsites * 2, sizeof *r.fds);
	for (s = 0; s < gp->nsites && rc == FP_OK; s++)
		for (ret = 0; ret < 2 && rc == FP_OK; ret++) {
			struct id_kind *ik;
			uint64_t id;

			if ((fd = open_event(gp, &gp->sites[s], ret, tid)) < 0) {
				rc = open_error(gp, errno, tid, cause);
				goto out;	/* FP_OK: the thread is gone, so are its probes */
			}
			if ((rc = attach_fd(gp, &r, fd, cause)) != FP_OK)
				break;
			if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
				rc = fail(cause, FP_ERR, "perf IOC_ID failed: %s", strerror(errno));
				break;
			}
			ik = ARRAY_PUSH(gp->ids, gp->nids, gp->aids);
			ik->id = id;
			ik->kind = gp->sites[s].take ? (ret ? GILPROBE_TAKE_RETURN : GILPROBE_TAKE_ENTER) :
			    (ret ? GILPROBE_DROP_RETURN : GILPROBE_DROP_ENTER);
		}
	if (rc == FP_OK) {
		*ARRAY_PUSH(gp->rings, gp->nrings, gp->arings) = r;
		return FP_OK;
	}
out:
	ring_close(gp, &r);
	return rc;
}

/*
 * Probe the threads started since the last look, and let go of the ones
 * that ended (after their last events were read).
 */
static int
rescan(struct gilprobe *gp, bool first, char **cause)
{
	pid_t *tids = NULL;
	size_t n = 0, i;
	int rc;

	if ((rc = procfs_tids(gp->pid, &tids, &n, cause)) != FP_OK)
		return rc;
	for (i = 0; i < gp->nrings; ) {
		if (pid_in(tids, n, gp->rings[i].tid)) {
			i++;
			continue;
		}
		ring_close(gp, &gp->rings[i]);
		gp->rings[i] = gp->rings[--gp->nrings];
	}
	for (i = 0; i < n && rc == FP_OK; i++) {
		size_t k;

		for (k = 0; k < gp->nrings && gp->rings[k].tid != tids[i]; k++)
			continue;
		if (k < gp->nrings)
			continue;
		if (gp->nrings == MAX_THREADS) {
			rc = first ? fail(cause, FP_ERR, "%zu threads: more than the %d gilstat probes "
			    "exactly", n, MAX_THREADS) : FP_OK;
			break;
		}
		rc = open_thread(gp, tids[i], cause);
	}
	free(tids);
	return rc;
}

static int
open_all(struct gilprobe *gp, char **cause)
{
	long type, bit;

	if (!read_sysfs_int(UPROBE_PMU "/type", "", &type))
		return fail(cause, FP_ERR, "this kernel has no uprobe PMU (%s/type)", UPROBE_PMU);
	if (!read_sysfs_int(UPROBE_PMU "/format/retprobe", "config:", &bit) || bit < 0 || bit > 63)
		return fail(cause, FP_ERR, "this kernel's uprobe PMU has no retprobe bit");
	gp->type = (int)type;
	gp->retbit = 1ull << bit;
	return rescan(gp, true, cause);
}

int
gilprobe_open(pid_t pid, const char *binary, struct gilprobe **gpp, char **cause)
{
	struct gilprobe *gp = xcalloc(1, sizeof *gp);
	const char *base = strrchr(binary, '/');
	int rc;

	*gpp = NULL;
	gp->pid = pid;
	gp->page = (size_t)sysconf(_SC_PAGESIZE);
	gp->path = procfs_target_path(pid, binary);
	if ((rc = find_sites(gp, binary, cause)) == FP_OK)
		rc = open_all(gp, cause);
	if (rc != FP_OK) {
		gilprobe_close(gp);
		return rc;
	}
	gp->describe = xasprintf("uprobes on take_gil and drop_gil in %s (%zu sites), %zu threads "
	    "at start", base ? base + 1 : binary, gp->nsites, gp->nrings);
	*gpp = gp;
	return FP_OK;
}

static bool
kind_of(const struct gilprobe *gp, uint64_t id, enum gilprobe_kind *kind)
{
	size_t i;

	for (i = 0; i < gp->nids; i++)
		if (gp->ids[i].id == id) {
			*kind = gp->ids[i].kind;
			return true;
		}
	return false;
}

/* One record; `rec` is contiguous (copied out when it wrapped). */
static bool
handle_record(struct gilprobe *gp, const unsigned char *rec, gilprobe_event_fn *fn, void *arg)
{
	const struct perf_event_header *h = (const void *)rec;
	struct gilprobe_event ev;
	uint64_t id, v;
	uint32_t pidtid[2];

	if (h->type == PERF_RECORD_LOST && h->size >= sizeof *h + 16) {
		memcpy(&v, rec + sizeof *h + 8, 8);
		gp->lost += v;
		return false;
	}
	if (h->type != PERF_RECORD_SAMPLE || h->size < sizeof *h + 24)
		return false;
	memcpy(&id, rec + sizeof *h, 8);
	memcpy(pidtid, rec + sizeof *h + 8, 8);
	memcpy(&v, rec + sizeof *h + 16, 8);
	if (!kind_of(gp, id, &ev.kind))
		return false;
	ev.tid = (pid_t)pidtid[1];
	ev.time_ns = v;
	fn(arg, &ev);
	return true;
}

static size_t
drain(struct gilprobe *gp, struct ring *r, gilprobe_event_fn *fn, void *arg)
{
	struct perf_event_mmap_page *meta = r->base;
	const unsigned char *data = (const unsigned char *)r->base + gp->page;
	uint64_t size = RING_PAGES * gp->page;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	unsigned char buf[256];
	size_t n = 0;

	while (tail < head) {
		struct perf_event_header h;
		uint64_t at = tail % size;
		size_t i;

		for (i = 0; i < sizeof h; i++)
			((unsigned char *)&h)[i] = data[(at + i) % size];
		if (h.size < sizeof h)
			break;	/* cannot happen; never loop on it */
		if (h.size <= sizeof buf) {
			for (i = 0; i < h.size; i++)
				buf[i] = data[(at + i) % size];
			n += handle_record(gp, buf, fn, arg);
		}
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

size_t
gilprobe_poll(struct gilprobe *gp, int timeout_ms, gilprobe_event_fn *fn, void *arg)
{
	size_t i, n = 0;
	char *cause = NULL;

	for (i = 0; i < gp->nrings; i++)
		if (gp->rings[i].base != NULL)
			n += drain(gp, &gp->rings[i], fn, arg);
	(void)rescan(gp, false, &cause);	/* a failure leaves the threads probed so far */
	free(cause);
	array_reserve(&gp->pfds, &gp->apfds, gp->nrings + 1, sizeof *gp->pfds);
	for (i = 0; i < gp->nrings; i++) {
		gp->pfds[i].fd = gp->rings[i].leader;
		gp->pfds[i].events = POLLIN;
	}
	if (timeout_ms > 0)
		(void)poll(gp->pfds, gp->nrings, timeout_ms);	/* EINTR: drain, the caller decides */
	for (i = 0; i < gp->nrings; i++)
		if (gp->rings[i].base != NULL)
			n += drain(gp, &gp->rings[i], fn, arg);
	return n;
}

uint64_t
gilprobe_lost(const struct gilprobe *gp)
{
	return gp->lost;
}

const char *
gilprobe_describe(const struct gilprobe *gp)
{
	return gp->describe;
}

void
gilprobe_close(struct gilprobe *gp)
{
	size_t i;

	if (gp == NULL)
		return;
	for (i = 0; i < gp->nrings; i++)
		ring_close(gp, &gp->rings[i]);
	free(gp->rings);
	free(gp->ids);
	free(gp->pfds);
	free(gp->path);
	free(gp->describe);
	free(gp);
}
