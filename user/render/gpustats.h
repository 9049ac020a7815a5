/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* GPU activity of a recording: ioctls on GPU device nodes by name and CUDA
 * driver calls by function, with counts and latency percentiles. */
#ifndef TT_GPUSTATS_H
#define TT_GPUSTATS_H

#include <stdio.h>
#include "event.h"

struct tt_gpustats;

struct tt_gpustats *tt_gpustats_new(const struct tt_dev_info *devs,
				    size_t ndevs);
/* Takes TT_EV_IOCTL and TT_EV_GPU_CALL events, ignores the rest. */
int tt_gpustats_add(struct tt_gpustats *g, const struct tt_event *ev);
/* Whether anything GPU was seen. */
bool tt_gpustats_any(const struct tt_gpustats *g);
/* Text tables; 0 or -EIO. */
int tt_gpustats_text(FILE *out, struct tt_gpustats *g);
/* A JSON object {"devices":[...],"ioctls":[...],"cuda_calls":[...]}. */
int tt_gpustats_json(FILE *out, struct tt_gpustats *g);
/* Name of the ioctl ev (a TT_EV_IOCTL) given the device table. */
const char *tt_gpustats_ioctl_name(const struct tt_gpustats *g,
				   const struct tt_ioctl *ioc, char *buf,
				   size_t len);
void tt_gpustats_free(struct tt_gpustats *g);

#endif /* TT_GPUSTATS_H */
