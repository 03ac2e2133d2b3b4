/*
 * model unit test: the agent's JSON into core/model.h's structs, bad and
 * missing fields included, and the plain text rendered from the models
 * (core/render_agent), where the target's text is escaped.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/model_torch.h"
#include "core/render_agent.h"
#include "core/render_torch.h"
#include "tests/unit/tap.h"

static json_t *
j(const char *text)
{
	json_error_t err;
	/* as core/protocol.c decodes, which lets no NUL through */
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);

	if (v == NULL)
		diag("bad test JSON: %s: %s", text, err.text);
	return v;
}

static struct value_tree *
tree(const char *text)
{
	json_t *v = j(text);
	struct value_tree *t = value_tree_parse(v);

	json_decref(v);
	return t;
}

/* The value's plain text at indent 0. */
static void
renders(const char *text, const char *want, const char *what)
{
	struct value_tree *t = tree(text);
	struct sbuf out = { 0 };

	render_value(&out, t, 0);
	is_str(out.s ? out.s : "", want, "%s", what);
	sbuf_free(&out);
	value_tree_free(t);
}

static void
test_values(void)
{
	struct value_tree *t;
	const char *bad[] = { "null", "3", "\"x\"", "[]", "true" };
	size_t i;

	t = tree("{\"r\": \"42\"}");
	ok(t->kind == VALUE_LEAF && strcmp(t->repr, "42") == 0 && !t->repr_failed,
	    "a leaf keeps its repr");
	value_tree_free(t);
	t = tree("{\"r\": \"<repr failed: E: x>\", \"err\": true, \"rec\": true}");
	ok(t->repr_failed && t->recursive, "err and rec are flags of the leaf");
	value_tree_free(t);

	t = tree("{\"seq\": \"list\", \"open\": \"[\", \"close\": \"]\", \"n\": 3, "
	    "\"items\": [{\"r\": \"1\"}, {\"r\": \"2\"}], \"more\": 1}");
	ok(t->kind == VALUE_SEQ && t->nitems == 2 && t->n == 3 && t->more == 1 &&
	    strcmp(t->type_name, "list") == 0 && strcmp(t->items[1].value->repr, "2") == 0,
	    "a sequence: type, length, items, more");
	value_tree_free(t);
	renders("{\"seq\": \"list\", \"open\": \"[\", \"close\": \"]\", \"n\": 3, "
	    "\"items\": [{\"r\": \"1\"}, {\"r\": \"2\"}], \"more\": 1}",
	    "[1, 2, ... 1 more item]", "a sequence renders on one line with what was left out");
	renders("{\"seq\": \"tuple\", \"open\": \"(\", \"close\": \")\", \"n\": 1, "
	    "\"items\": [{\"r\": \"1\"}]}", "(1,)", "a one-element tuple keeps its comma");

	t = tree("{\"map\": \"dict\", \"open\": \"{\", \"close\": \"}\", \"n\": 2, "
	    "\"items\": [[{\"r\": \"'a'\"}, {\"r\": \"1\"}], \"junk\"]}");
	ok(t->kind == VALUE_MAP && t->nitems == 2 && strcmp(t->items[0].key->repr, "'a'") == 0 &&
	    strcmp(t->items[1].key->repr, "?") == 0 && strcmp(t->items[1].value->repr, "?") == 0,
	    "a mapping: key/value pairs; a pair that is not one is ? : ?");
	value_tree_free(t);
	renders("{\"map\": \"dict\", \"open\": \"{\", \"close\": \"}\", \"n\": 1, "
	    "\"items\": [[{\"r\": \"'a'\"}, {\"r\": \"1\"}]]}", "{'a': 1}", "a mapping renders");

	t = tree("{\"obj\": \"m.Pt\", \"addr\": \"0x10\", \"n\": 3, "
	    "\"attrs\": [[\"x\", {\"r\": \"1\"}], [7, {\"r\": \"2\"}], [\"y\", {\"r\": \"3\"}]]}");
	ok(t->kind == VALUE_OBJECT && t->nitems == 2 && strcmp(t->items[1].name, "y") == 0 &&
	    strcmp(t->addr, "0x10") == 0, "an object: an attribute with no name is dropped");
	value_tree_free(t);
	renders("{\"obj\": \"m.Pt\", \"addr\": \"0x10\", \"attrs\": [[\"x\", {\"r\": \"1\"}]], "
	    "\"more\": 2}", "m.Pt(x=1, ...)", "an object renders inline");

	for (i = 0; i < sizeof bad / sizeof *bad; i++) {
		t = tree(bad[i]);
		ok(t->kind == VALUE_LEAF && strcmp(t->repr, "?") == 0, "a node %s is the leaf ?",
		    bad[i]);
		value_tree_free(t);
	}
	t = value_tree_parse(NULL);
	ok(t->kind == VALUE_LEAF && strcmp(t->repr, "?") == 0, "a missing node is the leaf ?");
	value_tree_free(t);
	t = tree("{\"seq\": 5, \"items\": {\"a\": 1}, \"more\": -4, \"n\": \"x\"}");
	ok(t->kind == VALUE_SEQ && strcmp(t->open, "") == 0 && strcmp(t->type_name, "") == 0 &&
	    t->nitems == 0 && t->more == 0 && t->n == -1,
	    "mistyped fields are empty: no brackets, no items, nothing more, no length");
	value_tree_free(t);
	t = tree("{\"r\": 12}");
	ok(t->kind == VALUE_LEAF && strcmp(t->repr, "") == 0, "a repr that is no string is empty");
	value_tree_free(t);
}

static void
test_hostile_values(void)
{
	struct value_tree *t, *w;
	struct value_block *b;
	struct sbuf out = { 0 };
	json_t *v;
	char *deep;
	size_t i, depth = 1000;

	t = tree("{\"r\": \"\\u001b[2J\\u001b]0;x\\u0007\"}");
	is_str(t->repr, "\x1b[2J\x1b]0;x\x07", "the model keeps the target's bytes as they are");
	value_tree_free(t);
	renders("{\"r\": \"\\u001b[2Jx\"}", "\\x1b[2Jx", "rendered, a repr's escape sequence is shown, "
	    "not sent");
	renders("{\"obj\": \"T\\u001b[1m\", \"addr\": \"0x1\", \"attrs\": "
	    "[[\"a\\u009b\", {\"r\": \"1\"}]]}", "T\\x1b[1m(a\\u009b=1)",
	    "a type and an attribute name are escaped too");
	renders("{\"seq\": \"list\", \"open\": \"[\\n\", \"close\": \"]\", \"items\": []}",
	    "[\\n]", "a bracket cannot break the line");

	v = j("{\"expr\": \"a\\nb\", \"type\": \"int\", \"value\": {\"r\": \"1\\n2\"}, "
	    "\"truncated\": true}");
	b = value_block_parse(v);
	render_value_block(&out, b);
	is_str(out.s, "EXPR:  a\n       b\nTYPE:  int\nVALUE: 1\n       2\n"
	    "(the value was cut short: it is larger than flight_profiler shows)\n",
	    "a block: continuation lines are indented, so none can pass for a field");
	sbuf_free(&out);
	value_block_free(b);
	json_decref(v);

	v = j("{\"count\": 3, \"shown\": -2}");
	b = value_block_parse(v);
	ok(b->has_count && b->count == 3 && b->shown == 0 && strcmp(b->expr, "") == 0 &&
	    b->value->kind == VALUE_LEAF && !b->truncated,
	    "a block with missing fields: empty text, the leaf ?, a negative count is 0");
	value_block_free(b);
	json_decref(v);
	b = value_block_parse(NULL);
	ok(!b->has_count && strcmp(b->type_name, "") == 0, "a block from no data is empty");
	value_block_free(b);

	/* Nesting as deep as the decoder lets through: parsed and freed whole. */
	deep = xmalloc(depth * 60 + 32);
	deep[0] = '\0';
	for (i = 0; i < depth; i++)
		strcat(deep, "{\"seq\": \"list\", \"open\": \"[\", \"close\": \"]\", \"items\": [");
	strcat(deep, "{\"r\": \"x\"}");
	for (i = 0; i < depth; i++)
		strcat(deep, "]}");
	t = tree(deep);
	for (i = 0, w = t; w->kind == VALUE_SEQ && w->nitems == 1; i++)
		w = w->items[0].value;
	ok(i == depth && w->kind == VALUE_LEAF && strcmp(w->repr, "x") == 0,
	    "a tree %zu levels deep is parsed whole", depth);
	value_tree_free(t);
	free(deep);
}

static void
test_threads(void)
{
	struct agent_threads *m;
	const struct agent_frame *f;
	struct py_thread th[2];
	struct py_snapshot snap;
	json_t *v;

	v = j("{\"names\": [{\"ident\": 1, \"name\": \"main\", \"daemon\": true, \"native_id\": 9},"
	    "{\"ident\": 2, \"name\": 5}, {\"ident\": 3}, \"junk\"],"
	    " \"stacks\": [{\"ident\": 1, \"frames\": ["
	    "{\"file\": \"a.py\", \"func\": \"inner\", \"line\": 3, \"locals\": "
	    "[[\"x\", \"1\"], [\"y\"], [3, \"z\"], \"bad\", [\"s\", \"l1\\nl2\"]], \"locals_more\": 2},"
	    "{\"file\": \"a.py\", \"func\": \"mid\", \"line\": -7, \"locals_note\": \"gone\","
	    " \"locals\": [[\"q\", \"1\"]]},"
	    "{\"file\": \"a.py\", \"func\": \"outer\"}]}, {\"ident\": 1, \"frames\": []}]}");
	m = agent_threads_parse(v);
	json_decref(v);
	ok(m->has_names && m->nnames == 1 && m->names[0].ident == 1 && m->names[0].daemon &&
	    m->names[0].native_id == 9 && strcmp(m->names[0].name, "main") == 0,
	    "names: only entries with a name that is a string");
	ok(m->nstacks == 2 && m->stacks[0].nframes == 3, "stacks and their frames");
	f = &m->stacks[0].frames[0];
	ok(f->locals.nvars == 3 && strcmp(f->locals.vars[1].name, "y") == 0 &&
	    strcmp(f->locals.vars[1].repr, "?") == 0 && strcmp(f->locals.vars[2].repr, "l1\nl2") == 0 &&
	    f->locals.more == 2 && f->locals.note == NULL,
	    "locals: nameless pairs dropped, a missing repr is ?, more counted");
	f = &m->stacks[0].frames[1];
	ok(f->locals.note != NULL && strcmp(f->locals.note, "gone") == 0 && f->locals.nvars == 0 &&
	    f->line == 0, "a note stands for the locals; a negative line is 0");
	ok(m->stacks[0].frames[2].locals.nvars == 0 && m->stacks[0].frames[2].line == 0,
	    "a frame with no locals field has none");

	/* The outside view saw 4 frames (the thread went one deeper since). */
	f = agent_threads_frame(m, 1, 4, 1, "a.py", "inner");
	ok(f == &m->stacks[0].frames[0], "frames align from the outer end");
	ok(agent_threads_frame(m, 1, 4, 3, "a.py", "outer") == &m->stacks[0].frames[2],
	    "the outermost frame is the agent's last");
	ok(agent_threads_frame(m, 1, 4, 1, "a.py", "other") == NULL, "another function: no frame");
	ok(agent_threads_frame(m, 1, 4, 0, "a.py", "inner") == NULL,
	    "deeper than the agent saw: no frame");
	ok(agent_threads_frame(m, 1, 4, 4, "a.py", "inner") == NULL, "an index past the stack");
	ok(agent_threads_frame(m, 7, 4, 1, "a.py", "inner") == NULL &&
	    agent_threads_stack(m, 7) == NULL, "a thread the agent did not see");

	memset(th, 0, sizeof th);
	memset(&snap, 0, sizeof snap);
	th[0].thread_id = 1;
	th[0].name = xstrdup("python3");
	th[1].thread_id = 2;
	th[1].name = xstrdup("worker");
	snap.threads = th;
	snap.nthreads = 2;
	render_apply_thread_names(&snap, m);
	ok(strcmp(th[0].name, "main") == 0 && strcmp(th[1].name, "worker") == 0,
	    "Python names replace OS names; a thread without one keeps its own");
	free(th[0].name);
	free(th[1].name);
	agent_threads_free(m);

	v = j("{\"asyncio\": {\"loops\": [{\"ident\": 1, \"error\": \"e\", \"tasks\": [{\"name\": "
	    "\"T\", \"coro\": \"c\", \"state\": \"pending\", \"current\": true, \"frames\": "
	    "[{\"file\": \"b.py\", \"line\": 4, \"func\": \"f\"}]}, {}]}]}}");
	m = agent_threads_parse(v);
	json_decref(v);
	ok(!m->has_names && m->nloops == 1 && m->loops[0].ntasks == 2 &&
	    strcmp(m->loops[0].error, "e") == 0 && m->loops[0].tasks[0].current &&
	    m->loops[0].tasks[0].awaiting == NULL && m->loops[0].tasks[0].frames[0].line == 4 &&
	    strcmp(m->loops[0].tasks[1].name, "") == 0 && m->loops[0].tasks[1].nframes == 0,
	    "asyncio: loops, tasks, their frames; an empty task has empty fields");
	agent_threads_free(m);

	v = j("[1, 2]");
	m = agent_threads_parse(v);
	json_decref(v);
	ok(!m->has_names && m->nstacks == 0 && m->nloops == 0 && m->asyncio_note == NULL,
	    "an answer that is not an object is empty");
	agent_threads_free(m);
}

static int
msg(const char *text, struct proto_msg *out)
{
	json_t *root = j(text);
	char err[128];
	int rc = proto_msg_from_json(root, out, err, sizeof err);

	json_decref(root);	/* the message holds its own reference */
	return rc;
}

static void
test_statements(void)
{
	struct output_chunk c;
	struct statement_end e;
	struct proto_msg m;
	struct agent_threads *t;
	json_t *v;

	v = j("{\"out\": \"a\\tb\\u001b[2J\\r\\n\"}");
	ok(output_chunk_parse(v, &c) && c.len == 9 && strcmp(c.text, "a\tb\x1b[2J\r\n") == 0,
	    "output keeps its bytes for the sink to escape");
	output_chunk_clear(&c);
	json_decref(v);
	v = j("{\"out\": 5}");
	ok(!output_chunk_parse(v, &c) && c.text == NULL && c.len == 0, "an out that is no string");
	json_decref(v);
	ok(!output_chunk_parse(NULL, &c), "an event with no data");

	v = j("{\"incomplete\": true}");
	statement_end_parse(v, &e);
	ok(e.incomplete && e.exc == NULL && e.traceback == NULL, "console: more lines wanted");
	statement_end_clear(&e);
	json_decref(v);
	v = j("{\"exc\": \"ValueError\", \"message\": \"ValueError: x\", \"traceback\": 3}");
	statement_end_parse(v, &e);
	ok(!e.incomplete && strcmp(e.exc, "ValueError") == 0 && e.traceback == NULL,
	    "a failed statement: exception and message; a traceback that is no string is none");
	statement_end_clear(&e);
	json_decref(v);

	if (msg("{\"t\": \"ev\", \"id\": 4, \"data\": {\"out\": \"hi\"}}", &m) == 0) {
		ok(output_chunk_from_msg(&m, &c) && strcmp(c.text, "hi") == 0, "an event's output");
		output_chunk_clear(&c);
		statement_end_from_msg(&m, &e);
		ok(!e.incomplete, "an event is no end");
		proto_msg_clear(&m);
	} else {
		ok(0, "an event's output");
		ok(0, "an event is no end");
	}
	if (msg("{\"t\": \"end\", \"id\": 4, \"ok\": false, \"error\": \"x\", \"kind\": \"internal\", "
	    "\"data\": {\"names\": [{\"ident\": 1, \"name\": \"n\"}]}}", &m) == 0) {
		t = agent_threads_from_end(&m);
		ok(!t->has_names && t->nnames == 0, "a failed end gives an empty model");
		agent_threads_free(t);
		ok(!output_chunk_from_msg(&m, &c), "an end carries no output");
		proto_msg_clear(&m);
	} else {
		ok(0, "a failed end gives an empty model");
		ok(0, "an end carries no output");
	}
}

static void
test_torch_modules(void)
{
	struct torch_modules *t;
	struct sbuf out = { 0 };
	json_t *v;

	v = j("{\"steps\": 2, \"steps_asked\": 3, \"root\": \"Model\", \"roots\": 1, "
	    "\"step_ms\": [1.5, 2.5], \"memory\": \"CPU\", \"modules\": 2, \"rows\": ["
	    "{\"module\": \"Model.fc1\", \"stage\": \"forward\", \"calls\": 2, \"total_ms\": 1.0, "
	    "\"avg_ms\": 0.5, \"share\": 25.0, \"mem\": -2048, \"mem_peak\": 4096}, "
	    "{\"module\": \"x\\u001b[2J\", \"stage\": \"backward\", \"calls\": \"3\", "
	    "\"mem\": null}, 7]}");
	t = torch_modules_parse(v);
	ok(t->steps == 2 && t->steps_asked == 3 && strcmp(t->root, "Model") == 0 &&
	    t->step_avg_ms == 2.0 && strcmp(t->memory, "CPU") == 0 && t->nrows == 3,
	    "torch modules: the steps, their average, the rows");
	ok(!t->rows[0].backward && t->rows[0].calls == 2 && t->rows[0].avg_ms == 0.5 &&
	    t->rows[0].has_mem && t->rows[0].mem == -2048 && t->rows[0].mem_peak == 4096,
	    "a forward row with its memory");
	ok(t->rows[1].backward && t->rows[1].calls == 0 && !t->rows[1].has_mem &&
	    strcmp(t->rows[1].module, "x\x1b[2J") == 0,
	    "a backward row: calls that are no number are 0, null memory is unmeasured, the name kept");
	ok(t->rows[2].module != NULL && t->rows[2].module[0] == '\0' && !t->rows[2].backward,
	    "a row that is no object: empty");
	render_torch_modules(&out, t);
	ok(out.s != NULL && strstr(out.s, "2 steps of Model") && strstr(out.s, "FEWER than asked") &&
	    strstr(out.s, "-2.00 KB") && strstr(out.s, "| backward |") && !strchr(out.s, '\x1b'),
	    "rendered: the steps, the memory, the stage; the target's name escaped");
	sbuf_free(&out);
	torch_modules_free(t);
	json_decref(v);
	t = torch_modules_parse(NULL);
	ok(t->nrows == 0 && t->steps == 0 && t->step_avg_ms == 0, "no answer: an empty table");
	torch_modules_free(t);
}

int
main(void)
{
	test_values();
	test_hostile_values();
	test_threads();
	test_statements();
	test_torch_modules();
	return done_testing();
}
