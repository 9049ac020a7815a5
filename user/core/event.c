/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Event type names and payload sizes, from the one per-type table that
 * also drives the .ttft record codec (ttfile_codec.c). */
#include "event.h"
#include "ttfile_codec.h"

int tt_event_payload_size(unsigned int type)
{
	const struct ttfile_type_desc *d = ttfile_type_desc(type);

	if (!d || !d->stored)
		return -1;
	return d->payload_size;
}

const char *tt_event_type_name(unsigned int type)
{
	const struct ttfile_type_desc *d = ttfile_type_desc(type);

	return d ? d->name : "unknown";
}
