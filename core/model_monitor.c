/*
 * model_monitor — `monitor` rows: parse and plain text.
 */
#include "config.h"

#include "core/model_monitor.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/model.h"
#include "core/termsafe.h"

static double
num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : 0.0;
}

static long long
count(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : 0;
}

void
monitor_row_parse(json_t *data, struct monitor_row *m)
{
	json_t *obs = json_object_get(data, "observed"), *v;
	size_t i;

	memset(m, 0, sizeof *m);
	m->started = json_is_true(json_object_get(data, "started"));
	if (m->started) {
		m->observed = xcalloc(json_array_size(obs) + 1, sizeof *m->observed);
		json_array_foreach(obs, i, v)
			if (json_is_string(v))
				m->observed[m->nobserved++] = xstrdup(json_string_value(v));
		m->matched = count(data, "matched");
		m->cycle_s = num(data, "cycle");
		return;
	}
	m->method = model_text(data, "method");
	m->time = num(data, "time");
	m->cycle = count(data, "cycle");
	m->calls = count(data, "calls");
	m->success = count(data, "success");
	m->failed = count(data, "failed");
	m->dropped = count(data, "dropped");
	m->fail_rate = num(data, "fail_rate");
	m->has_cost = json_is_number(json_object_get(data, "avg_ms"));
	m->avg_ms = num(data, "avg_ms");
	m->min_ms = num(data, "min_ms");
	m->max_ms = num(data, "max_ms");
	m->p99_ms = num(data, "p99_ms");
}

void
monitor_row_clear(struct monitor_row *m)
{
	size_t i;

	for (i = 0; i < m->nobserved; i++)
		free(m->observed[i]);
	free(m->observed);
	free(m->method);
	memset(m, 0, sizeof *m);
}

static void
monitor_started(struct sbuf *out, const struct monitor_row *m)
{
	size_t i;

	if (m->nobserved == 1 && m->matched == 1) {
		termsafe_addf(out, "Monitoring %s every %g s (Ctrl-C to stop).\n", m->observed[0],
		    m->cycle_s);
		return;
	}
	sbuf_addf(out, "Pattern matched %lld method%s; monitoring %zu every %g s (Ctrl-C to "
	    "stop):\n", m->matched, m->matched == 1 ? "" : "s", m->nobserved, m->cycle_s);
	for (i = 0; i < m->nobserved; i++)
		termsafe_addf(out, "  %s\n", m->observed[i]);
}

void
monitor_row_render(struct sbuf *out, const struct monitor_row *m, bool header)
{
	char when[64];
	time_t sec = (time_t)m->time;
	struct tm tm;

	if (m->started) {
		monitor_started(out, m);
		return;
	}
	if (header)
		sbuf_add(out, "TIME                 CALLS   OK      FAIL    FAIL%   AVG ms    MIN ms    "
		    "MAX ms    P99 ms    METHOD\n");
	if (localtime_r(&sec, &tm) == NULL ||
	    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		strcpy(when, "?");
	sbuf_addf(out, "%-20s %-7lld %-7lld %-7lld %5.1f%%  ", when, m->calls, m->success,
	    m->failed, m->fail_rate);
	if (m->has_cost)
		sbuf_addf(out, "%-9.3f %-9.3f %-9.3f %-9.3f ", m->avg_ms, m->min_ms, m->max_ms,
		    m->p99_ms);
	else
		sbuf_addf(out, "%-9s %-9s %-9s %-9s ", "-", "-", "-", "-");
	termsafe_addf(out, "%s\n", m->method);
	if (m->dropped > 0)
		sbuf_addf(out, "    (%lld calls were not counted: they came faster than the agent "
		    "could fold them)\n", m->dropped);
}
