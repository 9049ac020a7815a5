// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The processes of the stream: the ones it shows at work (traced: their
 * threads have timelines) and the ones that read a request (servers: only
 * their sends make hops, docs/design.md §4.11).
 */
#include "analyzer_int.h"

int an_mark_traced(struct tt_analyzer *a, __u32 tgid)
{
	int err;

	if (!tgid || tgid == a->last_tgid)
		return 0;
	err = tt_critpath_add_tgid(a->cp, tgid);
	if (!err)
		a->last_tgid = tgid;
	return err;
}

/* Marks the processes whose threads the event shows at work: current in
 * process context for the events only traced threads emit, and the other
 * side of a switch or fork. */
int an_mark_event_tgids(struct tt_analyzer *a, const struct tt_event *ev)
{
	bool process_ctx = !(ev->h.flags & (TT_F_HARDIRQ | TT_F_SOFTIRQ));
	int err = 0;

	switch (ev->h.type) {
	case TT_EV_RECV:
	case TT_EV_SEND:
	case TT_EV_COMM:
	case TT_EV_EXIT:
		if (process_ctx)
			err = an_mark_traced(a, ev->h.tgid);
		break;
	case TT_EV_FORK:
		if (process_ctx)
			err = an_mark_traced(a, ev->h.tgid);
		if (!err)
			err = an_mark_traced(a, ev->fork.child_tgid);
		break;
	case TT_EV_SWITCH:
		if (ev->sw.sw_flags & TT_SW_PREV_TRACED)
			err = an_mark_traced(a, ev->h.tgid);
		if (!err && (ev->sw.sw_flags & TT_SW_NEXT_TRACED))
			err = an_mark_traced(a, ev->sw.next_tgid);
		break;
	}
	return err;
}

int an_server_read(struct tt_analyzer *a, __u32 tgid)
{
	if (tt_hmap_find(&a->server_tgids, tgid, 0))
		return 0;
	return tt_hmap_put(&a->server_tgids, tgid, 0, 1);
}
