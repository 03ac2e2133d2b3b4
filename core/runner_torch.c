/*
 * runner_torch — the `torch` commands: one streaming request each (the
 * agent says what it waits for, then ends with what it wrote or measured);
 * Ctrl-C cancels, and either way the agent removes its hooks.
 */
#include "config.h"

#include "core/runner_int.h"

#include <string.h>

#include "core/render_torch.h"
#include "core/util.h"

static void
torch_event(struct runner *r, void *ctx, const struct proto_msg *msg)
{
	struct sbuf out = { 0 };

	if (msg->type != PROTO_EVENT || !json_is_object(msg->data))
		return;
	render_torch_waiting(&out, ctx, msg->data);
	if (out.s != NULL)
		runner_write(r, out.s);
	sbuf_free(&out);
}

/* module, class, method and -nm of req into args; FP_OK or a usage error. */
static int
observed_args(const struct cmd_request *req, json_t *args, const char *cmd, char **cause)
{
	int rc;

	if ((rc = runner_add_str(args, "module", command_arg(req, "module"), cmd, cause)) ||
	    (rc = runner_add_str(args, "class", command_arg(req, "class"), cmd, cause)) ||
	    (rc = runner_add_str(args, "method", command_arg(req, "method"), cmd, cause)) ||
	    (rc = runner_add_str(args, "nested", command_opt(req, "--nested-method"), cmd, cause)))
		return rc;
	return FP_OK;
}

/* Send args (stolen) as a torch request and show its end with show(). */
static int
torch_request(struct runner *r, const char *cmd, json_t *args,
    void (*show)(struct sbuf *, const char *, json_t *), struct sbuf *out, char **cause)
{
	struct proto_msg end;
	int rc;

	if ((rc = runner_stream(r, "torch", args, 0, torch_event, (void *)cmd, &end, cause)) != FP_OK)
		return rc;
	if (end.ok)
		show(out, cmd, end.data);
	else if (strcmp(end.kind, "cancelled") == 0)
		sbuf_addf(out, "%s: cancelled; the hooks are removed, nothing was written\n", cmd);
	else
		rc = runner_end_failure(&end, cmd, cause);
	proto_msg_clear(&end);
	return rc;
}

static json_t *
new_args(const struct cmd_request *req, const char *action)
{
	return json_pack("{s:s,s:f}", "action", action, "timeout",
	    command_number(req, "--timeout"));
}

int
runner_cmd_torch_profile(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	json_t *args = new_args(req, "profile");
	int rc;

	if ((rc = observed_args(req, args, "torch profile", cause)) != FP_OK ||
	    (rc = runner_add_str(args, "file", command_value(req, "--filepath"), "torch profile",
	    cause)) != FP_OK) {
		json_decref(args);
		return rc;
	}
	return torch_request(ctx, "torch profile", args, render_torch_written, out, cause);
}

int
runner_cmd_torch_memory(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	json_t *args = new_args(req, "memory");
	int rc = FP_OK;

	json_object_set_new(args, "record", json_boolean(command_opt(req, "--record") != NULL));
	if ((command_opt(req, "--record") != NULL &&
	    (rc = observed_args(req, args, "torch memory", cause)) != FP_OK) ||
	    (rc = runner_add_str(args, "file", command_value(req, "--filepath"), "torch memory",
	    cause)) != FP_OK) {
		json_decref(args);
		return rc;
	}
	return torch_request(ctx, "torch memory", args, render_torch_written, out, cause);
}

static void
show_modules(struct sbuf *out, const char *cmd, json_t *data)
{
	struct torch_modules *t = torch_modules_parse(data);

	(void)cmd;
	render_torch_modules(out, t);
	torch_modules_free(t);
}

int
runner_cmd_torch_modules(void *ctx, const struct cmd_request *req, struct sbuf *out, char **cause)
{
	json_t *args = new_args(req, "modules");
	int rc;

	json_object_set_new(args, "steps", json_integer(command_int(req, "--steps")));
	if ((rc = runner_add_str(args, "filter", command_opt(req, "--filter"), "torch modules",
	    cause)) != FP_OK) {
		json_decref(args);
		return rc;
	}
	return torch_request(ctx, "torch modules", args, show_modules, out, cause);
}
