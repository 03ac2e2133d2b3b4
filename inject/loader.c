#include "config.h"

#include "inject/loader.h"

#include <stdlib.h>

#include "core/util.h"
#include "inject/inject.h"
#include "inject/remote_exec.h"

#define INJECT_TIMEOUT_MS 10000	/* the whole ptrace injection */

static int
loader_inject(pid_t pid, const char *lib, const char *symbol, const char *arg, bool loaded,
    char **cause)
{
	struct inject_opts opts = { .timeout_ms = INJECT_TIMEOUT_MS, .loaded = loaded };

	return inject_load(pid, lib, symbol, arg, &opts, cause);
}

static bool
loader_pep768_applies(unsigned python_hex)
{
	return remote_exec_applies(python_hex);
}

static int
loader_pep768_run(pid_t pid, const char *script, int take_ms, bool *fallback, char **cause)
{
	struct remote_exec_request req;
	int rc;

	*fallback = true;
	switch (remote_exec_send(pid, script, &req, cause)) {
	case REMOTE_EXEC_SENT:
		break;
	case REMOTE_EXEC_REFUSED:
		*fallback = false;
		return FP_EPERM;
	case REMOTE_EXEC_UNAVAILABLE:
	default:
		return FP_ERR;
	}
	rc = remote_exec_wait_taken(&req, take_ms, cause);
	if (rc == FP_EEXITED) {
		*fallback = false;
		return rc;
	}
	if (rc != FP_OK && remote_exec_retract(&req))
		return rc;	/* withdrawn: nothing will run it */
	/* Taken, perhaps just as it was withdrawn: the script runs. */
	if (rc != FP_OK && cause != NULL) {
		free(*cause);
		*cause = NULL;
	}
	*fallback = false;
	return FP_OK;
}

const struct attach_loader inject_loader = {
	.inject = loader_inject,
	.pep768_applies = loader_pep768_applies,
	.pep768_refusal = remote_exec_refusal,
	.pep768_source = remote_exec_bootstrap_source,
	.pep768_run = loader_pep768_run,
};
