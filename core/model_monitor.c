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

#define M(member, kind) MODEL_FIELD(struct monitor_row, member, kind)

static const struct model_field start_fields[] = {
	M(matched, MODEL_COUNT),
	MODEL_FIELD_AS(struct monitor_row, cycle_s, "cycle", MODEL_NUM),
};

static const struct model_field row_fields[] = {
	M(method, MODEL_TEXT), M(time, MODEL_NUM), M(cycle, MODEL_COUNT),
	M(calls, MODEL_COUNT), M(success, MODEL_COUNT), M(failed, MODEL_COUNT),
	M(dropped, MODEL_COUNT), M(fail_rate, MODEL_NUM), M(avg_ms, MODEL_NUM),
	M(min_ms, MODEL_NUM), M(max_ms, MODEL_NUM), M(p99_ms, MODEL_NUM),
};

void
monitor_row_parse(json_t *data, struct monitor_row *m)
{
	memset(m, 0, sizeof *m);
	m->started = json_is_true(json_object_get(data, "started"));
	if (m->started) {
		m->observed = model_strings(json_object_get(data, "observed"), &m->nobserved);
		model_fields_read(data, start_fields, MODEL_NFIELDS(start_fields), m);
		return;
	}
	model_fields_read(data, row_fields, MODEL_NFIELDS(row_fields), m);
	m->has_cost = json_is_number(json_object_get(data, "avg_ms"));
}

void
monitor_row_clear(struct monitor_row *m)
{
	strv_free(m->observed, m->nobserved);
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
