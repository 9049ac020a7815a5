/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Small helpers shared by the command-line front ends. */
#ifndef TT_UTIL_H
#define TT_UTIL_H

#include <stdbool.h>
#include <time.h>
#include <linux/types.h>

__u64 tt_clock_ns(clockid_t clock);
/* "10", "10s", "1.5s", "500ms", "2m", "1h" -> ns; -EINVAL when malformed
 * or not positive. */
int tt_parse_duration(const char *s, __u64 *ns);
/* A positive integer in [min, max]; -EINVAL otherwise. */
int tt_parse_long(const char *s, long min, long max, long *out);
/* "16M", "1G", "65536" (bytes) -> bytes; -EINVAL when malformed. */
int tt_parse_size(const char *s, __u64 *bytes);

/* The names of the set bits of bits (bit i is names[i]), comma-separated,
 * into buf; returns how many bytes were written (0 when none is set). */
size_t tt_bit_names(char *buf, size_t len, __u32 bits,
		    const char *const *names, size_t nnames);

#endif /* TT_UTIL_H */
