/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The host's energy sensors, read by the recorder into TT_EV_ENERGY
 * records (docs/design.md §9.2): RAPL zones through powercap, hwmon energy
 * and power inputs, and NVIDIA GPUs through NVML (libnvidia-ml, loaded
 * with dlopen when it is there).
 */
#ifndef TT_SENSORS_H
#define TT_SENSORS_H

#include <stddef.h>
#include "event.h"

struct tt_sensors;

/*
 * Finds the sensors under sysfs_root (normally "/sys": class/powercap,
 * class/hwmon) and the GPUs NVML knows (nvml_lib: the library to load,
 * NULL for libnvidia-ml.so.1). Never fails for want of a sensor: it then
 * has none. NULL only when out of memory.
 */
struct tt_sensors *tt_sensors_open(const char *sysfs_root,
				   const char *nvml_lib);
size_t tt_sensors_count(const struct tt_sensors *s);
/* One line naming the sensors found, or saying there are none. */
void tt_sensors_describe(const struct tt_sensors *s, char *buf, size_t len);
/* Reads every sensor once and hands each reading to fn as a TT_EV_ENERGY
 * event stamped now (CLOCK_MONOTONIC). A sensor that fails to read is
 * skipped this time. Returns fn's first error, else 0. */
int tt_sensors_sample(struct tt_sensors *s,
		      int (*fn)(void *ctx, const struct tt_event *ev),
		      void *ctx);
void tt_sensors_close(struct tt_sensors *s);

#endif /* TT_SENSORS_H */
