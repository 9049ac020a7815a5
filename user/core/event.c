// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Event type names and payload sizes: what each record is. How a record
 * is stored is the format layer's business (format/ttfile_codec.c). */
#include <stdbool.h>
#include "event.h"

static const struct {
	const char *name;
	bool stored; /* false: BPF to collector only, never recorded */
	unsigned short payload_size;
} types[TT_EV_MAX] = {
	[TT_EV_NONE] = { "none", false, 0 },
	[TT_EV_FORK] = { "fork", true, sizeof(struct tt_fork) },
	[TT_EV_EXIT] = { "exit", true, 0 },
	[TT_EV_COMM] = { "comm", true, sizeof(struct tt_comm) },
	[TT_EV_CONN_OPEN] = { "conn_open", true, sizeof(struct tt_conn) },
	[TT_EV_CONN_CLOSE] = { "conn_close", true, sizeof(struct tt_sock) },
	[TT_EV_DATA_READY] = { "data_ready", true, sizeof(struct tt_sock) },
	[TT_EV_DATA_READY_DEV] = { "data_ready_dev", true,
				   sizeof(struct tt_sock_dev) },
	[TT_EV_RECV] = { "recv", true, sizeof(struct tt_sock) },
	[TT_EV_SEND] = { "send", true, sizeof(struct tt_send) },
	[TT_EV_XMIT] = { "xmit", true, sizeof(struct tt_xmit) },
	[TT_EV_LOST] = { "lost", true, sizeof(struct tt_lost) },
	[TT_EV_SEND_RAW] = { "send_raw", false, 0 },
	[TT_EV_SWITCH] = { "switch", true, sizeof(struct tt_switch) },
	[TT_EV_WAKING] = { "waking", true, sizeof(struct tt_wake) },
	[TT_EV_WAKEUP_NEW] = { "wakeup_new", true, sizeof(struct tt_wake) },
	[TT_EV_BLOCK] = { "block", true, sizeof(struct tt_block) },
	[TT_EV_FAULT] = { "fault", true, sizeof(struct tt_fault) },
	[TT_EV_IOCTL] = { "ioctl", true, sizeof(struct tt_ioctl) },
	[TT_EV_GPU_CALL] = { "gpu_call", true, sizeof(struct tt_gpu_call) },
	[TT_EV_LIB_OPEN] = { "lib_open", false, 0 },
	[TT_EV_RTLOCK] = { "rtlock", true, sizeof(struct tt_rtlock) },
	[TT_EV_GO] = { "go", true, sizeof(struct tt_go) },
	[TT_EV_GO_CHAN] = { "go_chan", true, sizeof(struct tt_go_chan) },
	[TT_EV_DATA_WAKE] = { "data_wake", true, sizeof(struct tt_wake) },
	[TT_EV_DATA_READ] = { "data_read", true, sizeof(struct tt_wake) },
	[TT_EV_MSG_SEND] = { "msg_send", true, sizeof(struct tt_msg_send) },
	[TT_EV_MARK] = { "mark", true, sizeof(struct tt_mark) },
	[TT_EV_FILEIO] = { "fileio", true, sizeof(struct tt_fileio) },
	[TT_EV_ENERGY] = { "energy", true, sizeof(struct tt_energy) },
	[TT_EV_STEAL] = { "steal", true, sizeof(struct tt_steal) },
	[TT_EV_PIPE_IO] = { "pipe_io", true, sizeof(struct tt_pipe_io) },
	[TT_EV_TLS_PLAIN] = { "tls_plain", false, 0 },
	[TT_EV_POLL] = { "poll", true, sizeof(struct tt_poll) },
};

int tt_event_payload_size(unsigned int type)
{
	if (type >= TT_EV_MAX || !types[type].name || !types[type].stored)
		return -1;
	return types[type].payload_size;
}

const char *tt_event_type_name(unsigned int type)
{
	if (type >= TT_EV_MAX || !types[type].name)
		return "unknown";
	return types[type].name;
}

const char *tt_mark_kind_name(unsigned int kind)
{
	static const char *const names[] = { "?", "enqueue", "dispatch",
					     "token" };

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

const char *tt_rt_kind_name(unsigned int kind)
{
	switch (kind) {
	case TT_RT_CPYTHON:
		return "cpython";
	case TT_RT_GO:
		return "go";
	default:
		return "runtime";
	}
}
