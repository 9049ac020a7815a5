// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include "dump.h"
#include "gpu.h"
#include "text.h"

/* What a data wake's writer wrote to (enum tt_ipc_kind). */
static const char *ipc_kind_name(__u32 kind)
{
	return kind == TT_IPC_UNIX	  ? "unix" :
	       kind == TT_IPC_EVENTFD	  ? "eventfd" :
	       kind == TT_IPC_PIPE	  ? "pipe" :
	       kind == TT_IPC_PIPE_BEHIND ? "pipe-behind" :
					    "?";
}

static void dump_payload(FILE *out, const struct tt_event *ev)
{
	char comm[TT_TEXT_ROOM(TT_COMM_LEN)];
	char name[TT_TEXT_ROOM(TT_ENERGY_NAME_LEN)];
	const struct tt_cuda_fn *fns;
	size_t nfns;

	switch (ev->h.type) {
	case TT_EV_FORK:
		fprintf(out, "child=%u/%u comm=%s", ev->fork.child_tgid,
			ev->fork.child_tid,
			tt_text_escape(comm, sizeof(comm), ev->fork.comm,
				       sizeof(ev->fork.comm)));
		break;
	case TT_EV_COMM:
		fprintf(out, "comm=%s",
			tt_text_escape(comm, sizeof(comm), ev->comm.comm,
				       sizeof(ev->comm.comm)));
		break;
	case TT_EV_CONN_OPEN:
		fprintf(out, "sk=%#llx family=%u lport=%u rport=%u",
			(unsigned long long)ev->conn.sk, ev->conn.family,
			ev->conn.lport, ev->conn.rport);
		break;
	case TT_EV_CONN_CLOSE:
	case TT_EV_DATA_READY:
	case TT_EV_RECV:
		fprintf(out, "sk=%#llx len=%lld", (unsigned long long)ev->sock.sk,
			(long long)ev->sock.len);
		if (ev->h.type == TT_EV_RECV && (ev->h.flags & TT_F_HOP_REPLY))
			fprintf(out, " hop_reply port=%u",
				ev->h.flags >> TT_F_PORT_SHIFT);
		break;
	case TT_EV_STEAL:
		fprintf(out, "ns=%llu on=-%lluns",
			(unsigned long long)ev->steal.ns,
			(unsigned long long)(ev->h.ts - ev->steal.ts_on));
		break;
	case TT_EV_DATA_READY_DEV:
		fprintf(out, "sk=%#llx len=%lld dev=-%lluns",
			(unsigned long long)ev->sock_dev.sk,
			(long long)ev->sock_dev.len,
			(unsigned long long)(ev->h.ts - ev->sock_dev.ts_dev));
		break;
	case TT_EV_SEND:
		fprintf(out,
			"sk=%#llx len=%lld seq=%u enter=-%lluns cls=%u tokens=%u flags=%#x",
			(unsigned long long)ev->send.sk, (long long)ev->send.len,
			ev->send.seq,
			(unsigned long long)(ev->h.ts - ev->send.ts_enter),
			ev->send.cls, ev->send.tokens, ev->send.flags);
		break;
	case TT_EV_XMIT:
		fprintf(out, "sk=%#llx seq=%u end_seq=%u len=%u",
			(unsigned long long)ev->xmit.sk, ev->xmit.seq,
			ev->xmit.end_seq, ev->xmit.len);
		break;
	case TT_EV_LOST:
		fprintf(out, "count=%llu cpu=%u since=%llu",
			(unsigned long long)ev->lost.count, ev->lost.lost_cpu,
			(unsigned long long)ev->lost.since_ts);
		break;
	case TT_EV_SWITCH:
		fprintf(out,
			"next=%u/%u prev_state=%lld syscall=%d arg0=%#llx flags=%#x mode=%o rdev=%#x ino=%llu",
			ev->sw.next_tgid, ev->sw.next_tid,
			(long long)ev->sw.prev_state, ev->sw.syscall_nr,
			(unsigned long long)ev->sw.arg0, ev->sw.sw_flags,
			ev->sw.fd_mode, ev->sw.fd_rdev,
			(unsigned long long)ev->sw.fd_ino);
		break;
	case TT_EV_DATA_READ:
		fprintf(out, "via=%s", ipc_kind_name(ev->wake.target_cpu));
		break;
	case TT_EV_POLL:
		fprintf(out, "ready=%d syscall=%u", ev->poll.nready,
			ev->poll.syscall_nr);
		break;
	case TT_EV_PIPE_IO:
		fprintf(out, "%s pipe=%#llx pos=%llu len=%u",
			ev->pipe.op == TT_PIPE_WRITE ? "write" : "read",
			(unsigned long long)ev->pipe.pipe,
			(unsigned long long)ev->pipe.pos, ev->pipe.len);
		break;
	case TT_EV_MSG_SEND:
		fprintf(out, "zmq sock=%#llx fn=%s flags=%#x",
			(unsigned long long)ev->msg.sock,
			ev->msg.fn == TT_MSG_ZMQ_MSG_SEND ? "zmq_msg_send" :
			ev->msg.fn == TT_MSG_ZMQ_SEND	  ? "zmq_send" :
							    "zmq_sendmsg",
			ev->msg.flags);
		break;
	case TT_EV_DATA_WAKE:
		fprintf(out, "target=%u/%u via=%s waker_syscall=%d arg0=%#llx",
			ev->wake.target_tgid, ev->wake.target_tid,
			ipc_kind_name(ev->wake.target_cpu),
			ev->wake.waker_syscall,
			(unsigned long long)ev->wake.waker_arg0);
		break;
	case TT_EV_WAKING:
	case TT_EV_WAKEUP_NEW:
		fprintf(out, "target=%u/%u cpu=%u waker_syscall=%d arg0=%#llx",
			ev->wake.target_tgid, ev->wake.target_tid,
			ev->wake.target_cpu, ev->wake.waker_syscall,
			(unsigned long long)ev->wake.waker_arg0);
		break;
	case TT_EV_BLOCK:
		fprintf(out, "rq=%#llx phase=%u dev=%#x sector=%llu bytes=%u write=%u error=%d",
			(unsigned long long)ev->blk.rq, ev->blk.phase,
			ev->blk.dev, (unsigned long long)ev->blk.sector,
			ev->blk.nr_bytes, ev->blk.write, ev->blk.error);
		break;
	case TT_EV_FAULT:
		fprintf(out, "dev=%#x ino=%llu index=%llu", ev->fault.dev,
			(unsigned long long)ev->fault.ino,
			(unsigned long long)ev->fault.index);
		break;
	case TT_EV_FILEIO:
		fprintf(out,
			"syscall=%d fd=%u ret=%lld enter=-%lluns mode=%o dev=%#x rdev=%#x ino=%llu flags=%#o",
			ev->fileio.syscall, ev->fileio.fd,
			(long long)ev->fileio.ret,
			(unsigned long long)(ev->h.ts - ev->fileio.ts_enter),
			ev->fileio.mode, ev->fileio.dev, ev->fileio.rdev,
			(unsigned long long)ev->fileio.ino, ev->fileio.f_flags);
		break;
	case TT_EV_GPU_CALL:
		fns = tt_cuda_fns(&nfns);
		fprintf(out, "fn=%u(%s) arg0=%#llx ret=%d enter=-%lluns%s",
			ev->call.fn,
			ev->call.fn < nfns ? fns[ev->call.fn].name : "?",
			(unsigned long long)ev->call.arg0, ev->call.ret,
			(unsigned long long)(ev->h.ts - ev->call.ts_enter),
			ev->call.flags & TT_CALL_ENTRY ? " entry-only" : "");
		break;
	case TT_EV_RTLOCK:
		fprintf(out, "runtime=%s lo=%#llx hi=%#llx",
			tt_rt_kind_name(ev->rtlock.kind),
			(unsigned long long)ev->rtlock.lo,
			(unsigned long long)ev->rtlock.hi);
		break;
	case TT_EV_GO:
		fprintf(out, "g=%#llx %u->%u", (unsigned long long)ev->go.g,
			ev->go.from, ev->go.to);
		break;
	case TT_EV_GO_CHAN:
		fprintf(out, "chan=%#llx %s qcount=%u",
			(unsigned long long)ev->go_chan.ch,
			ev->go_chan.op == TT_GO_CHAN_SEND ? "send" : "recv",
			ev->go_chan.qcount);
		break;
	case TT_EV_MARK:
		fprintf(out, "marker=%s spec=%u",
			tt_mark_kind_name(ev->mark.kind),
			TT_MARK_SPEC_INDEX(ev->mark.spec));
		if (ev->mark.flags & TT_MARK_F_PEER)
			fprintf(out, " peer=%u",
				TT_MARK_SPEC_PEER(ev->mark.spec));
		else if (ev->mark.flags & TT_MARK_F_PEER_UNREAD)
			fprintf(out, " peer=unread");
		if (ev->mark.flags & TT_MARK_F_UNREAD)
			fprintf(out, " key=unread");
		else if (ev->mark.flags & TT_MARK_F_KEY)
			fprintf(out, " key=%#llx%s",
				(unsigned long long)ev->mark.key,
				ev->mark.flags & TT_MARK_F_VALUE ? " (value)" :
								   "");
		break;
	case TT_EV_ENERGY:
		fprintf(out, "domain=%u name=%s kind=%u value=%llu max=%llu",
			ev->energy.domain,
			tt_text_escape(name, sizeof(name), ev->energy.name,
				       sizeof(ev->energy.name)),
			ev->energy.kind, (unsigned long long)ev->energy.value,
			(unsigned long long)ev->energy.max);
		break;
	}
}

int tt_dump_event(FILE *out, const struct tt_event *ev, __u64 t0)
{
	fprintf(out, "%14.6f cpu%-3u %7u/%-7u %-11s %s%s", (ev->h.ts - t0) / 1e6,
		ev->h.cpu, ev->h.tgid, ev->h.tid,
		tt_event_type_name(ev->h.type),
		ev->h.flags & TT_F_HARDIRQ ? "[hardirq] " : "",
		ev->h.flags & TT_F_SOFTIRQ ? "[softirq] " : "");
	dump_payload(out, ev);
	return fputc('\n', out) == EOF ? -EIO : 0;
}
