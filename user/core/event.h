/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The event stream: one typed record per kernel event, shared by the
 * collector, the recorder, the reader and the analyzer. */
#ifndef TT_EVENT_H
#define TT_EVENT_H

#include <stddef.h>
#include <linux/types.h>
#include "ttftrace.h"

struct tt_event {
	struct tt_hdr h;
	union {
		struct tt_fork fork;
		struct tt_comm comm;
		struct tt_conn conn;
		struct tt_sock sock;
		struct tt_send send;
		struct tt_xmit xmit;
		struct tt_lost lost;
		struct tt_switch sw;
		struct tt_wake wake;
		struct tt_block blk;
		struct tt_fault fault;
		struct tt_ioctl ioc;
		struct tt_gpu_call call;
	};
};

/* Size of the payload that follows the header for a stored type, or -1 when
 * the type is unknown or never stored (TT_EV_SEND_RAW). */
int tt_event_payload_size(unsigned int type);
const char *tt_event_type_name(unsigned int type);

#endif /* TT_EVENT_H */
