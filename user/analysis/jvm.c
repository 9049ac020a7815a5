// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * HotSpot's own threads (docs/design.md §4.3, "A JVM's own threads"): the
 * collector's, the VM thread's safepoints, the JIT's compilers. Their wakes
 * are the runtime's, as Go's scheduler's are: followed, never a hand-off.
 */
#include <string.h>
#include "cp_internal.h"

/*
 * The names HotSpot gives the threads it starts for itself (JDK 9-21; a
 * comm keeps 15 bytes), and the JDK's reference and cleaner threads: none
 * runs the application's work. A handler that queues a method for the JIT
 * wakes the compiler threads; one past a safepoint is woken by the VM
 * thread.
 */
static const char *const hotspot_own[] = {
	"VM Thread",	   "VM Periodic Tas", "GC Thread#",	 "G1 ",
	"C1 CompilerThre", "C2 CompilerThre", "Sweeper thread",	 "Service Thread",
	"Monitor Deflati", "Notification Th", "Signal Dispatch", "Reference Handl",
	"Finalizer",	   "Common-Cleaner",  "Attach Listener", "ZDriver",
	"ZDirector",	   "ZStat",	      "ZWorker#",	 "Shenandoah",
};

static bool hotspot_named(const char *comm)
{
	size_t i;

	for (i = 0; i < sizeof(hotspot_own) / sizeof(hotspot_own[0]); i++)
		if (!strncmp(comm, hotspot_own[i], strlen(hotspot_own[i])))
			return true;
	return false;
}

/* tgid has a thread named "VM Thread": HotSpot's, which every JVM starts */
static bool hotspot_process(const struct tt_critpath *cp, __u32 tgid)
{
	size_t i;

	for (i = 0; i < cp->nthreads; i++)
		if (cp->threads[i]->tgid == tgid && cp->threads[i]->has_comm &&
		    !strcmp(cp->threads[i]->comm, "VM Thread"))
			return true;
	return false;
}

void cp_mark_runtime_threads(struct tt_critpath *cp)
{
	__u32 jvm = 0, other = 0;
	size_t i;

	for (i = 0; i < cp->nthreads; i++) {
		struct cp_thread *th = cp->threads[i];

		th->runtime_own = false;
		if (!th->has_comm || !hotspot_named(th->comm))
			continue;
		/* one process or two: remember the last answers */
		if (th->tgid != jvm && th->tgid != other) {
			if (hotspot_process(cp, th->tgid))
				jvm = th->tgid;
			else
				other = th->tgid;
		}
		th->runtime_own = th->tgid == jvm;
	}
}
