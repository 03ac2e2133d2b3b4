/*
 * procset — resolve a set of processes from /proc (see procset.h).
 */
#include "config.h"

#include "core/procset.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "core/procfs.h"
#include "core/regex.h"
#include "core/termsafe.h"
#include "core/util.h"

int
procset_parse_pids(struct proc_set_spec *spec, const char *text, char **cause)
{
	const char *p = text;
	size_t alloc = spec->npids;

	for (;;) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno != 0 || v <= 0 || v > 0x3fffffff || (*end != ',' && *end != '\0'))
			return termsafe_fail(cause, FP_EUSAGE, "'%s' is not a process id, nor a list "
			    "of them (4101,4102)", text);
		*ARRAY_PUSH(spec->pids, spec->npids, alloc) = (pid_t)v;
		if (*end == '\0')
			return FP_OK;
		p = end + 1;
	}
}

bool
procset_is_set(const struct proc_set_spec *spec)
{
	return spec->npids > 1 || spec->tree || spec->match != NULL;
}

/* Every pid under /proc with its parent's; false if /proc cannot be listed. */
struct proc_link {
	pid_t pid, ppid;
};

static pid_t
parent_of(pid_t pid)
{
	char path[64], *s, *close;
	size_t len;
	int ppid = 0;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((s = read_file_str(path, &len)) == NULL)
		return 0;
	/* comm may hold spaces and parentheses: the state follows the last ')'. */
	if ((close = strrchr(s, ')')) != NULL)
		sscanf(close + 1, " %*c %d", &ppid);
	free(s);
	return (pid_t)ppid;
}

static bool
list_processes(struct proc_link **links, size_t *n)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t alloc = 0;

	*links = NULL;
	*n = 0;
	if (d == NULL)
		return false;
	while ((de = readdir(d)) != NULL) {
		struct proc_link *l;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		l = ARRAY_PUSH(*links, *n, alloc);
		l->pid = (pid_t)atoi(de->d_name);
		l->ppid = parent_of(l->pid);
	}
	closedir(d);
	return true;
}

/* Add the descendants of every pid in *v (a growing list: breadth first). */
static void
add_descendants(pid_t **v, size_t *n, size_t *alloc, const struct proc_link *links, size_t nl)
{
	size_t i, k;

	for (i = 0; i < *n; i++)
		for (k = 0; k < nl; k++)
			if (links[k].ppid == (*v)[i] && !pid_in(*v, *n, links[k].pid))
				*ARRAY_PUSH(*v, *n, *alloc) = links[k].pid;
}

static int
add_matching(pid_t **v, size_t *n, size_t *alloc, const char *pattern,
    const struct proc_link *links, size_t nl, char **cause)
{
	pcre2_match_data *md;
	pcre2_code *re;
	size_t k;

	if ((re = regex_compile(pattern, 0, "--match pattern", cause)) == NULL)
		return FP_EUSAGE;
	md = pcre2_match_data_create_from_pattern(re, NULL);
	for (k = 0; k < nl; k++) {
		char *cmd = procfs_cmdline(links[k].pid);

		/* Kernel threads have no command line; we are not a member. */
		if (cmd != NULL && *cmd != '\0' && links[k].pid != getpid() && regex_match(re, md, cmd) &&
		    !pid_in(*v, *n, links[k].pid))
			*ARRAY_PUSH(*v, *n, *alloc) = links[k].pid;
		free(cmd);
	}
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return FP_OK;
}

int
procset_resolve(const struct proc_set_spec *spec, struct proc_set *set, char **cause)
{
	struct proc_link *links = NULL;
	size_t nl = 0, n = 0, alloc = 0, i;
	pid_t *v = NULL;
	int rc = FP_OK;

	memset(set, 0, sizeof *set);
	for (i = 0; i < spec->npids; i++)
		if (!pid_in(v, n, spec->pids[i]))
			*ARRAY_PUSH(v, n, alloc) = spec->pids[i];
	if ((spec->tree || spec->match != NULL) && !list_processes(&links, &nl)) {
		free(v);
		return fail(cause, FP_ERR, "cannot list /proc: %s", strerror(errno));
	}
	if (spec->tree)
		add_descendants(&v, &n, &alloc, links, nl);
	if (spec->match != NULL)
		rc = add_matching(&v, &n, &alloc, spec->match, links, nl, cause);
	free(links);
	if (rc != FP_OK) {
		free(v);
		return rc;
	}
	if (n == 0) {
		free(v);
		return termsafe_fail(cause, FP_ENOPROC, "no process matches --match '%s'",
		    spec->match ? spec->match : "");
	}
	procfs_sort_pids(v, n);
	set->m = xcalloc(n, sizeof *set->m);
	for (i = 0; i < n; i++) {
		set->m[i].pid = v[i];
		set->m[i].cmdline = procfs_cmdline(v[i]);
	}
	set->n = n;
	free(v);
	return FP_OK;
}

void
procset_clear(struct proc_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		free(set->m[i].cmdline);
	free(set->m);
	memset(set, 0, sizeof *set);
}

void
procset_spec_clear(struct proc_set_spec *spec)
{
	free(spec->pids);
	free(spec->match);
	memset(spec, 0, sizeof *spec);
}

void
procset_ranges(struct sbuf *out, const pid_t *pids, size_t n)
{
	size_t i = 0, j;

	while (i < n) {
		for (j = i; j + 1 < n && pids[j + 1] == pids[j] + 1; j++)
			;
		sbuf_addf(out, "%s%d", i > 0 ? ", " : "", (int)pids[i]);
		if (j > i)
			sbuf_addf(out, "%s%d", j == i + 1 ? ", " : "\u2013", (int)pids[j]);
		i = j + 1;
	}
}
