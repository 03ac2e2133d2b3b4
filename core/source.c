#include "config.h"

#include "core/source.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/procfs.h"
#include "core/util.h"

#define MAX_SOURCE (16u << 20)

struct source_file {
	char *name;
	char *text;		/* NUL-separated lines, NULL if unreadable */
	char **lines;
	int nlines;
};

struct source_cache {
	pid_t pid;
	struct source_file *files;
	size_t n, alloc;
};

struct source_cache *
source_cache_new(pid_t pid)
{
	struct source_cache *sc = xcalloc(1, sizeof *sc);

	sc->pid = pid;
	return sc;
}

void
source_cache_free(struct source_cache *sc)
{
	size_t i;

	if (sc == NULL)
		return;
	for (i = 0; i < sc->n; i++) {
		free(sc->files[i].name);
		free(sc->files[i].text);
		free(sc->files[i].lines);
	}
	free(sc->files);
	free(sc);
}

static void
load(struct source_cache *sc, struct source_file *f)
{
	char *path, *p;
	struct stat st;
	size_t len, alloc = 0;
	int n = 0;

	if (f->name[0] == '<')
		return;	/* <string>, <frozen ...> */
	if (f->name[0] == '/')
		path = procfs_target_path(sc->pid, f->name);
	else
		path = xasprintf("/proc/%d/cwd/%s", (int)sc->pid, f->name);
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)MAX_SOURCE) {
		free(path);
		return;
	}
	f->text = read_file_str(path, &len);
	free(path);
	if (f->text == NULL)
		return;
	if (memchr(f->text, '\0', len) != NULL) {
		free(f->text);
		f->text = NULL;
		return;
	}
	for (p = f->text; p < f->text + len;) {
		char *nl = memchr(p, '\n', (size_t)(f->text + len - p));

		*ARRAY_PUSH(f->lines, n, alloc) = p;
		if (nl == NULL)
			break;
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		p = nl + 1;
	}
	f->nlines = n;
}

static struct source_file *
get(struct source_cache *sc, const char *filename)
{
	struct source_file *f;
	size_t i;

	for (i = 0; i < sc->n; i++)
		if (strcmp(sc->files[i].name, filename) == 0)
			return &sc->files[i];
	f = ARRAY_PUSH(sc->files, sc->n, sc->alloc);
	memset(f, 0, sizeof *f);
	f->name = xstrdup(filename);
	load(sc, f);
	return f;
}

const char *
source_line(struct source_cache *sc, const char *filename, int line)
{
	struct source_file *f = get(sc, filename);

	if (line < 1 || line > f->nlines)
		return NULL;
	return f->lines[line - 1];
}

int
source_nlines(struct source_cache *sc, const char *filename)
{
	return get(sc, filename)->nlines;
}
