// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Energy sensors for the recorder (docs/design.md §9.2). Each sensor is a
 * domain of the recording: a sysfs file read as a number, or an NVIDIA GPU
 * read through NVML. Nothing is ever estimated: a host without sensors
 * records no reading, and the report says so.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "containers.h"
#include "sensors.h"
#include "util.h"

/* NVML's types, as nvml.h declares them (the header is not needed) */
typedef int nvml_ret_t; /* 0: NVML_SUCCESS */
typedef void *nvml_dev_t;
struct nvml_util {
	unsigned int gpu, memory; /* percent of the last sample period */
};

struct nvml {
	void *lib;
	nvml_ret_t (*init)(void);
	nvml_ret_t (*shutdown)(void);
	nvml_ret_t (*count)(unsigned int *n);
	nvml_ret_t (*handle)(unsigned int i, nvml_dev_t *dev);
	nvml_ret_t (*name)(nvml_dev_t dev, char *name, unsigned int len);
	nvml_ret_t (*energy)(nvml_dev_t dev, unsigned long long *mj);
	nvml_ret_t (*power)(nvml_dev_t dev, unsigned int *mw);
	nvml_ret_t (*util)(nvml_dev_t dev, struct nvml_util *u);
};

struct sensor {
	__u16 kind; /* TT_ENERGY_COUNTER or TT_ENERGY_POWER */
	__u16 source;
	char name[TT_ENERGY_NAME_LEN];
	char path[1400]; /* sysfs: the file read */
	__u64 max; /* powercap: max_energy_range_uj */
	nvml_dev_t dev; /* NVML */
	bool util; /* NVML: also its utilization */
};

struct tt_sensors {
	struct sensor *v;
	size_t n, cap;
	struct nvml nvml;
};

static int read_u64(const char *path, __u64 *out)
{
	char buf[64], *end;
	ssize_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -EIO;
	buf[len] = 0;
	errno = 0;
	*out = strtoull(buf, &end, 10);
	return errno || end == buf ? -EINVAL : 0;
}

/* The first line of a small sysfs file, or "" */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (f && fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = 0;
	if (f)
		fclose(f);
}

static struct sensor *add(struct tt_sensors *s, __u16 kind, __u16 source)
{
	struct sensor *x;

	if (s->n >= 65535 ||
	    tt_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return NULL;
	x = &s->v[s->n++];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->source = source;
	return x;
}

/*
 * RAPL zones: class/powercap/NAME:N. A sub-zone NAME:N:M (core, uncore) is
 * a part of its package, not counted again, but for dram, which is not in
 * the package's count; intel-rapl-mmio zones are the same packages read
 * another way.
 */
static bool rapl_zone(const char *dir, const char *d)
{
	char path[1400], name[32];
	const char *c = strchr(d, ':');

	if (d[0] == '.' || !c || !strncmp(d, "intel-rapl-mmio", 15))
		return false;
	if (!strchr(c + 1, ':'))
		return true;
	snprintf(path, sizeof(path), "%s/%s/name", dir, d);
	read_line(path, name, sizeof(name));
	return !strcmp(name, "dram");
}

static int scan_powercap(struct tt_sensors *s, const char *root)
{
	char dir[600], zone[1400];
	struct dirent **ents = NULL;
	struct sensor *x;
	__u64 v;
	int n, i, err = 0;

	snprintf(dir, sizeof(dir), "%s/class/powercap", root);
	n = scandir(dir, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;

		if (err || !rapl_zone(dir, d))
			continue;
		x = add(s, TT_ENERGY_COUNTER, TT_ESRC_POWERCAP);
		if (!x) {
			err = -ENOMEM;
			continue;
		}
		snprintf(x->path, sizeof(x->path), "%s/%s/energy_uj", dir, d);
		if (read_u64(x->path, &v)) {
			s->n--; /* no readable counter: not a sensor */
			continue;
		}
		snprintf(zone, sizeof(zone), "%s/%s/max_energy_range_uj", dir,
			 d);
		if (read_u64(zone, &x->max))
			x->max = 0;
		snprintf(zone, sizeof(zone), "%s/%s/name", dir, d);
		read_line(zone, x->name, sizeof(x->name));
		snprintf(x->name + strlen(x->name),
			 sizeof(x->name) - strlen(x->name), "%s%s",
			 x->name[0] ? " " : "", d);
	}
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return err;
}

/* hwmon: each energyN_input (uJ); a device's powerN_input (uW) only when
 * it has no energy input, which would count the same energy twice. */
static int scan_hwmon_dev(struct tt_sensors *s, const char *dev)
{
	static const char *const pre[] = { "energy", "power" };
	char path[1400], label[64], devname[32];
	struct dirent **ents = NULL;
	struct sensor *x;
	size_t before = s->n, len;
	int n, i, p, err = 0;
	__u64 v;

	n = scandir(dev, &ents, NULL, alphasort);
	snprintf(path, sizeof(path), "%s/name", dev);
	read_line(path, devname, sizeof(devname));
	for (p = 0; p < 2 && !err; p++) {
		if (p == 1 && s->n > before)
			break;
		for (i = 0; i < n && !err; i++) {
			const char *d = ents[i]->d_name;

			len = strlen(d);
			if (strncmp(d, pre[p], strlen(pre[p])) || len < 7 ||
			    strcmp(d + len - 6, "_input"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dev, d);
			if (read_u64(path, &v))
				continue;
			x = add(s, p ? TT_ENERGY_POWER : TT_ENERGY_COUNTER,
				TT_ESRC_HWMON);
			if (!x) {
				err = -ENOMEM;
				break;
			}
			snprintf(x->path, sizeof(x->path), "%s", path);
			snprintf(path, sizeof(path), "%s/%.*s_label", dev,
				 (int)(len - 6), d);
			read_line(path, label, sizeof(label));
			snprintf(x->name, sizeof(x->name), "%.16s %.*s%s%.20s",
				 devname[0] ? devname : "hwmon", (int)(len - 6),
				 d, label[0] ? " " : "", label);
		}
	}
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return err;
}

static int scan_hwmon(struct tt_sensors *s, const char *root)
{
	char dir[600], dev[900];
	struct dirent **ents = NULL;
	int n, i, err = 0;

	snprintf(dir, sizeof(dir), "%s/class/hwmon", root);
	n = scandir(dir, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (!err && ents[i]->d_name[0] != '.') {
			snprintf(dev, sizeof(dev), "%s/%s", dir,
				 ents[i]->d_name);
			err = scan_hwmon_dev(s, dev);
		}
		free(ents[i]);
	}
	free(ents);
	return err;
}

/* NVML's entry points, or false when the library or one of them is
 * missing (then it is closed again). */
static bool nvml_load(struct nvml *m, const char *lib)
{
	m->lib = dlopen(lib ? lib : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!m->lib)
		return false;
	*(void **)&m->init = dlsym(m->lib, "nvmlInit_v2");
	*(void **)&m->shutdown = dlsym(m->lib, "nvmlShutdown");
	*(void **)&m->count = dlsym(m->lib, "nvmlDeviceGetCount_v2");
	*(void **)&m->handle = dlsym(m->lib, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&m->name = dlsym(m->lib, "nvmlDeviceGetName");
	*(void **)&m->energy =
		dlsym(m->lib, "nvmlDeviceGetTotalEnergyConsumption");
	*(void **)&m->power = dlsym(m->lib, "nvmlDeviceGetPowerUsage");
	*(void **)&m->util = dlsym(m->lib, "nvmlDeviceGetUtilizationRates");
	if (m->init && m->shutdown && m->count && m->handle && m->energy &&
	    m->power && m->util && !m->init())
		return true;
	dlclose(m->lib);
	memset(m, 0, sizeof(*m));
	return false;
}

/* Each GPU: its energy counter (Volta and later), else its power. */
static int scan_nvml(struct tt_sensors *s, const char *lib)
{
	struct nvml *m = &s->nvml;
	unsigned long long mj;
	unsigned int n = 0, i, mw;
	struct nvml_util u;
	char name[64];
	struct sensor *x;
	nvml_dev_t dev;

	if (!nvml_load(m, lib) || m->count(&n))
		return 0;
	for (i = 0; i < n; i++) {
		if (m->handle(i, &dev))
			continue;
		if (!m->energy(dev, &mj))
			x = add(s, TT_ENERGY_COUNTER, TT_ESRC_NVML);
		else if (!m->power(dev, &mw))
			x = add(s, TT_ENERGY_POWER, TT_ESRC_NVML);
		else
			continue;
		if (!x)
			return -ENOMEM;
		x->dev = dev;
		x->util = !m->util(dev, &u);
		if (!m->name || m->name(dev, name, sizeof(name)))
			name[0] = 0;
		name[sizeof(name) - 1] = 0;
		snprintf(x->name, sizeof(x->name), "gpu%u%s%s", i,
			 name[0] ? " " : "", name);
	}
	return 0;
}

struct tt_sensors *tt_sensors_open(const char *sysfs_root, const char *nvml_lib)
{
	struct tt_sensors *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (!sysfs_root)
		sysfs_root = "/sys";
	/* a root too long for its paths has no sensors */
	if (strlen(sysfs_root) > 512)
		return s;
	if (scan_powercap(s, sysfs_root) || scan_hwmon(s, sysfs_root) ||
	    scan_nvml(s, nvml_lib)) {
		tt_sensors_close(s);
		return NULL;
	}
	return s;
}

size_t tt_sensors_count(const struct tt_sensors *s)
{
	return s->n;
}

void tt_sensors_describe(const struct tt_sensors *s, char *buf, size_t len)
{
	size_t i, off;

	if (!s->n) {
		snprintf(
			buf, len,
			"no energy sensor (powercap, hwmon or NVML): the report will have no energy figures");
		return;
	}
	off = snprintf(buf, len, "energy sensors:");
	for (i = 0; i < s->n && off < len; i++)
		off += snprintf(buf + off, len - off, "%s %s", i ? "," : "",
				s->v[i].name);
}

/* One sensor's reading into ev->energy; false when it could not be read. */
static bool read_sensor(struct tt_sensors *s, struct sensor *x,
			struct tt_energy *e)
{
	unsigned long long mj;
	unsigned int mw;

	e->kind = x->kind;
	e->max = x->max;
	if (x->source != TT_ESRC_NVML)
		return !read_u64(x->path, (__u64 *)&e->value);
	if (x->kind == TT_ENERGY_COUNTER) {
		if (s->nvml.energy(x->dev, &mj))
			return false;
		e->value = mj * 1000; /* mJ to uJ */
		return true;
	}
	if (s->nvml.power(x->dev, &mw))
		return false;
	e->value = mw * 1000ULL; /* mW to uW */
	return true;
}

int tt_sensors_sample(struct tt_sensors *s,
		      int (*fn)(void *ctx, const struct tt_event *ev),
		      void *ctx)
{
	struct tt_event ev;
	struct nvml_util u;
	struct sensor *x;
	size_t i;
	int err;

	for (i = 0; i < s->n; i++) {
		x = &s->v[i];
		memset(&ev, 0, sizeof(ev));
		ev.h.type = TT_EV_ENERGY;
		ev.energy.source = x->source;
		ev.energy.domain = i;
		memcpy(ev.energy.name, x->name, sizeof(ev.energy.name));
		ev.h.ts = tt_clock_ns(CLOCK_MONOTONIC);
		if (read_sensor(s, x, &ev.energy)) {
			err = fn(ctx, &ev);
			if (err)
				return err;
		}
		if (!x->util || s->nvml.util(x->dev, &u))
			continue;
		ev.energy.kind = TT_ENERGY_UTIL;
		ev.energy.value = u.gpu;
		ev.energy.max = 0;
		err = fn(ctx, &ev);
		if (err)
			return err;
	}
	return 0;
}

void tt_sensors_close(struct tt_sensors *s)
{
	if (!s)
		return;
	if (s->nvml.lib) {
		s->nvml.shutdown();
		dlclose(s->nvml.lib);
	}
	free(s->v);
	free(s);
}
