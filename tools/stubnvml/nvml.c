// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A stub libnvidia-ml.so.1 for the energy tests: the NVML entry points
 * ttftrace's recorder loads (user/record/sensors.c), with GPUs whose
 * readings the test scripts through the environment:
 *   STUBNVML_GPUS=N           how many GPUs (default 1)
 *   STUBNVML_ENERGY_FILE=F    each GPU's total energy in mJ, one line per
 *                             GPU (GPU i past the last line reads line 0),
 *                             read at every call: the test writes it
 *   STUBNVML_POWER_MW=P       without an energy file: energy unsupported,
 *                             power P mW
 *   STUBNVML_UTIL=U           GPU utilization, percent (default 0)
 *   STUBNVML_FAIL_INIT=1      nvmlInit_v2 fails (a driver not loaded)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_UNINITIALIZED 1

typedef struct {
	unsigned int gpu, memory;
} nvmlUtilization_t;

static int inited;

static unsigned int ngpus(void)
{
	const char *s = getenv("STUBNVML_GPUS");

	return s ? (unsigned int)atoi(s) : 1;
}

static unsigned int index_of(void *dev)
{
	return (unsigned int)((unsigned long)dev - 1);
}

int nvmlInit_v2(void)
{
	const char *f = getenv("STUBNVML_FAIL_INIT");

	if (f && *f == '1')
		return NVML_ERROR_NOT_SUPPORTED;
	inited = 1;
	return NVML_SUCCESS;
}

int nvmlShutdown(void)
{
	inited = 0;
	return NVML_SUCCESS;
}

int nvmlDeviceGetCount_v2(unsigned int *n)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	*n = ngpus();
	return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **dev)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (i >= ngpus())
		return NVML_ERROR_INVALID_ARGUMENT;
	*dev = (void *)(unsigned long)(i + 1);
	return NVML_SUCCESS;
}

int nvmlDeviceGetName(void *dev, char *name, unsigned int len)
{
	snprintf(name, len, "Stub GPU %u", index_of(dev));
	return NVML_SUCCESS;
}

int nvmlDeviceGetTotalEnergyConsumption(void *dev, unsigned long long *mj)
{
	const char *path = getenv("STUBNVML_ENERGY_FILE");
	unsigned long long v, first = 0;
	unsigned int i = 0, want = index_of(dev);
	FILE *f;
	int found = 0;

	if (!path)
		return NVML_ERROR_NOT_SUPPORTED;
	f = fopen(path, "r");
	if (!f)
		return NVML_ERROR_NOT_SUPPORTED;
	while (fscanf(f, "%llu", &v) == 1) {
		if (!i)
			first = v;
		if (i++ == want) {
			*mj = v;
			found = 1;
			break;
		}
	}
	fclose(f);
	if (!i)
		return NVML_ERROR_NOT_SUPPORTED;
	if (!found)
		*mj = first;
	return NVML_SUCCESS;
}

int nvmlDeviceGetPowerUsage(void *dev, unsigned int *mw)
{
	const char *s = getenv("STUBNVML_POWER_MW");

	if (!s)
		return NVML_ERROR_NOT_SUPPORTED;
	*mw = (unsigned int)strtoul(s, NULL, 10);
	return NVML_SUCCESS;
}

int nvmlDeviceGetUtilizationRates(void *dev, nvmlUtilization_t *u)
{
	const char *s = getenv("STUBNVML_UTIL");

	u->gpu = s ? (unsigned int)atoi(s) : 0;
	u->memory = 0;
	return NVML_SUCCESS;
}
