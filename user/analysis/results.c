// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The analyzer's results: each request's critical-path verdict taken into
 * it, the inter-token gaps grouped for percentiles, and the read API the
 * renderers use (docs/design.md §3, §4).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyzer.h"
#include "analyzer_int.h"
#include "util.h"

/* Puts the gaps of complete requests first, in id order: the ITL and the
 * emit gaps alike (one itl_off for both). */
int an_regroup_gaps(struct tt_analyzer *a)
{
	struct tt_u64vec out = {}, eout = {};
	size_t i, off;
	int pass;

	if (tt_u64vec_reserve(&out, a->gaps.n) ||
	    tt_u64vec_reserve(&eout, a->egaps.n)) {
		tt_u64vec_free(&out);
		return -ENOMEM;
	}
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < a->nreqs; i++) {
			struct req_rec *rec = &a->reqs[i];

			if (rec->r.complete != !pass)
				continue;
			off = out.n;
			if (rec->itl_n) {
				memcpy(out.v + off, a->gaps.v + rec->itl_off,
				       rec->itl_n * sizeof(*out.v));
				memcpy(eout.v + off, a->egaps.v + rec->itl_off,
				       rec->itl_n * sizeof(*eout.v));
			}
			out.n += rec->itl_n;
			eout.n += rec->itl_n;
			rec->itl_off = off;
		}
		if (!pass)
			a->itl_complete_n = out.n;
	}
	tt_u64vec_free(&a->gaps);
	tt_u64vec_free(&a->egaps);
	a->gaps = out;
	a->egaps = eout;
	return 0;
}

/* Takes the walk's verdict on r; the request stays complete only if the
 * walk completed too. */
static void attribute_one(struct tt_request *r, const struct tt_cp_result *res)
{
	const __u32 explained = TT_CP_INC_NOT_WALKED | TT_CP_INC_LOST |
				TT_CP_INC_NO_READ;

	if (!(res->incomplete & TT_CP_INC_NOT_WALKED)) {
		memcpy(r->stage_ns, res->stage_ns, sizeof(r->stage_ns));
		r->t_enqueue = res->t_enqueue;
		r->t_dispatch = res->t_dispatch;
		r->t_token = res->t_token;
		r->gil_ns = res->gil_ns;
		r->dispatch_rule = res->dispatch;
		r->enqueue_rule = res->enqueue;
		r->token_marker = res->token_marker;
	}
	r->attributed = res->complete;
	if (!res->complete &&
	    (!r->incomplete || (res->incomplete & ~explained)))
		r->incomplete |= TT_INC_NO_PATH;
	r->complete = !r->incomplete;
}

/* Walks every request's critical path (after the sort: index = id - 1).
 * Without memory for it every request is left unattributed. */
int an_attribute(struct tt_analyzer *a)
{
	int err = 0;

	static const struct tt_cp_result none = {
		.incomplete = TT_CP_INC_NOT_WALKED
	};
	struct tt_request *r;
	size_t i;

	if (!a->nreqs)
		return 0;
	a->cp_reqs = calloc(a->nreqs, sizeof(*a->cp_reqs));
	a->cp_res = calloc(a->nreqs, sizeof(*a->cp_res));
	if (!a->cp_reqs || !a->cp_res) {
		free(a->cp_res);
		a->cp_res = NULL;
		err = -ENOMEM;
	} else {
		for (i = 0; i < a->nreqs; i++) {
			r = &a->reqs[i].r;
			a->cp_reqs[i] = (struct tt_cp_request){
				.id = r->id,
				.t_arrive = r->t_arrive,
				.t_read = r->t_read,
				.t_first_write = r->t_first_write,
				.t_wire = r->t_wire,
				.t_end = r->t_end,
				.t_last_arrive = a->reqs[i].t_last_arrive,
				.reader_tid = r->reader_tid,
				.writer_tid = r->writer_tid,
			};
		}
		err = tt_critpath_walk_all(a->cp, a->cp_reqs, a->nreqs,
					   a->cp_res);
		if (err) {
			free(a->cp_res);
			a->cp_res = NULL;
		}
	}
	for (i = 0; i < a->nreqs; i++)
		attribute_one(&a->reqs[i].r, a->cp_res ? &a->cp_res[i] : &none);
	return err;
}

/* ---- accessors ---- */

size_t tt_analyzer_nrequests(const struct tt_analyzer *a)
{
	return a->nreqs;
}

const struct tt_request *tt_analyzer_request(const struct tt_analyzer *a,
					     size_t i)
{
	return i < a->nreqs ? &a->reqs[i].r : NULL;
}

const __u64 *tt_analyzer_itl(const struct tt_analyzer *a, size_t *n)
{
	*n = a->finished ? a->itl_complete_n : 0;
	return *n ? a->gaps.v : NULL;
}

const __u64 *tt_analyzer_itl_emit(const struct tt_analyzer *a, size_t *n)
{
	*n = a->finished ? a->itl_complete_n : 0;
	return *n ? a->egaps.v : NULL;
}

const __u64 *tt_analyzer_request_itl(const struct tt_analyzer *a, size_t i,
				     size_t *n)
{
	*n = i < a->nreqs ? a->reqs[i].itl_n : 0;
	return *n ? a->gaps.v + a->reqs[i].itl_off : NULL;
}

const __u64 *tt_analyzer_request_itl_emit(const struct tt_analyzer *a, size_t i,
					  size_t *n)
{
	*n = i < a->nreqs ? a->reqs[i].itl_n : 0;
	return *n ? a->egaps.v + a->reqs[i].itl_off : NULL;
}

const char *tt_end_name(unsigned int end)
{
	static const char *const names[] = { "open", "done", "next", "close" };

	return end < sizeof(names) / sizeof(names[0]) ? names[end] : "unknown";
}

__u64 tt_analyzer_events(const struct tt_analyzer *a)
{
	return a->st.events;
}

__u64 tt_analyzer_lost_cpu(const struct tt_analyzer *a, unsigned int cpu)
{
	return cpu < TT_LOST_CPUS ? a->lost_cpu[cpu] : 0;
}

__u64 tt_analyzer_lost(const struct tt_analyzer *a)
{
	return a->st.lost;
}

void tt_analyzer_stats(const struct tt_analyzer *a,
		       struct tt_analyzer_stats *st)
{
	*st = a->st;
	st->late = a->win.late;
}

const char *tt_analyzer_comm(const struct tt_analyzer *a, __u32 tid)
{
	return tt_critpath_comm(a->cp, tid);
}

int tt_analyzer_add_procs(struct tt_analyzer *a,
			  const struct tt_proc_info *procs, size_t n)
{
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		err = an_mark_traced(a, procs[i].tgid);
		if (err)
			return err;
		if (!procs[i].tid || !procs[i].comm[0] ||
		    tt_critpath_comm(a->cp, procs[i].tid))
			continue;
		err = tt_critpath_name_thread(a->cp, procs[i].tid,
					      procs[i].tgid, procs[i].comm);
		if (err)
			return err;
	}
	return 0;
}

int tt_analyzer_add_devices(struct tt_analyzer *a,
			    const struct tt_dev_info *devs, size_t n)
{
	size_t i;
	int err;

	/* FIFOs standing in for a device have no rdev: known by inode */
	for (i = 0; i < n; i++) {
		err = tt_critpath_add_gpu_device(a->cp, &devs[i]);
		if (err)
			return err;
	}
	return 0;
}

const struct tt_cp_result *tt_analyzer_cp_result(const struct tt_analyzer *a,
						 size_t i)
{
	return a->cp_res && i < a->nreqs ? &a->cp_res[i] : NULL;
}

const struct tt_cp_request *tt_analyzer_cp_request(const struct tt_analyzer *a,
						   size_t i)
{
	return a->cp_reqs && i < a->nreqs ? &a->cp_reqs[i] : NULL;
}

const struct tt_critpath *tt_analyzer_critpath(const struct tt_analyzer *a)
{
	return a->cp;
}

const char *tt_incomplete_str(__u32 incomplete, char *buf, size_t len)
{
	static const char *const names[TT_INC_NBITS] = {
		"no-arrive", "no-read",		  "no-response",
		"no-wire",   "closed-mid-stream", "open-at-end",
		"lost",	     "no-path",		  "error",
		"no-token",  "pipelined",
	};

	if (len && !incomplete)
		snprintf(buf, len, "complete");
	else
		tt_bit_names(buf, len, incomplete, names, TT_INC_NBITS);
	return buf;
}

const char *tt_request_peer(const struct tt_request *r, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];
	struct in6_addr a6;

	memcpy(&a6, r->raddr, sizeof(a6)); /* raddr is not 4-byte aligned */
	if (r->family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&a6)) {
		/* a dual-stack listener: the client is an IPv4 one */
		inet_ntop(AF_INET, r->raddr + 12, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, r->rport);
	} else if (r->family == AF_INET6) {
		inet_ntop(AF_INET6, r->raddr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, r->rport);
	} else if (r->family == AF_INET) {
		inet_ntop(AF_INET, r->raddr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, r->rport);
	} else {
		snprintf(buf, len, "unknown");
	}
	return buf;
}
