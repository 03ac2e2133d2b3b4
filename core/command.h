/*
 * command — the command language of the guide (`stack -f x.log`), one
 * table that drives the parser, `help`, and completion, shared by --cmd,
 * the line-mode prompt and the TUI command line.
 *
 * Parsing never touches the target.
 */
#ifndef FP_COMMAND_H
#define FP_COMMAND_H

#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

struct cmd_option {
	const char *shortname;	/* "-f", or NULL */
	const char *longname;	/* "--filepath" */
	const char *arg;	/* "FILE" if it takes a value, NULL for a flag */
	const char *help;
};

struct cmd_spec {
	const char *name;
	const char *usage;	/* after the name: "[pid] [-f FILE] [--native]" */
	const char *summary;	/* one line */
	const char *positional;	/* what the positional arguments are */
	unsigned min_args, max_args;
	const struct cmd_option *options;
	size_t noptions;
};

struct cmd_arg {
	const struct cmd_option *opt;
	char *value;		/* NULL for a flag */
};

struct cmd_request {
	const struct cmd_spec *spec;
	char **args;		/* positional arguments */
	size_t nargs, aargs;
	struct cmd_arg *opts;
	size_t nopts, aopts;
};

/* Split a line like a shell: quotes, backslashes.  Returns an fp_status. */
int command_split(const char *line, char ***words, size_t *n, char **cause);
void command_words_free(char **words, size_t n);

/*
 * Parse one command line.  FP_EUSAGE with a message (suggesting the
 * closest command or option) on bad input; FP_OK with *req otherwise.
 * An empty line gives FP_OK and *req == NULL.
 */
int command_parse(const char *line, struct cmd_request **req, char **cause);
void command_request_free(struct cmd_request *req);

/* The value of an option (by long name), "" for a present flag, NULL if absent. */
const char *command_opt(const struct cmd_request *req, const char *longname);

const struct cmd_spec *command_find(const char *name);
const struct cmd_spec *const *command_all(size_t *n);

/* `help` (every command) and `help NAME`; FP_EUSAGE for an unknown NAME. */
int command_help(struct sbuf *out, const char *name, char **cause);

/* The closest of `candidates` to `word` within a small edit distance, or NULL. */
const char *command_closest(const char *word, const char *const *candidates, size_t n);

#endif
