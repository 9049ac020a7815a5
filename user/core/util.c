// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

__u64 tt_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int tt_parse_duration(const char *s, __u64 *ns)
{
	static const struct {
		const char *suffix;
		double scale;
	} units[] = { { "", 1e9 },   { "s", 1e9 },   { "ms", 1e6 },
		      { "us", 1e3 }, { "ns", 1 },    { "m", 60e9 },
		      { "h", 3600e9 } };
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v > 0) || !isfinite(v))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v * units[i].scale >= 1.8e19)
			return -EINVAL;
		*ns = (__u64)(v * units[i].scale);
		return *ns ? 0 : -EINVAL;
	}
	return -EINVAL;
}

int tt_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int tt_parse_size(const char *s, __u64 *bytes)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end || !v || v > (1ULL << 40))
		return -EINVAL;
	*bytes = v;
	return 0;
}

size_t tt_bit_names(char *buf, size_t len, __u32 bits,
		    const char *const *names, size_t nnames)
{
	size_t off = 0;
	int k;

	if (!len)
		return 0;
	buf[0] = '\0';
	for (size_t i = 0; i < nnames; i++) {
		if (!(bits & (1u << i)))
			continue;
		k = snprintf(buf + off, len - off, "%s%s", off ? "," : "",
			     names[i]);
		if (k < 0 || (size_t)k >= len - off)
			break;
		off += k;
	}
	return off;
}
