#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# TGI's router as it is built, in Rust on tokio (tools/scenarios/tgi_rs,
# built here offline against Debian's librust-tokio-dev), driving the
# Python shard of `tgi`, recorded and compared with the router's own log by
# tools/scenarios/compare.py. tokio's workers steal each other's tasks and
# wake each other, and the router validates each request on a blocking
# thread of the pool, whose answer wakes whichever worker is parked
# (docs/design.md §4.4, "A helper that answers the pool"). Without the
# workers' wakes taken for the runtime's, t_dispatch was off by more than
# 1 ms for 7-36 of 120 requests in ten runs (two under each of five loads:
# nothing, a CPU hog, two, stalls on both CPUs, a compile), admission to
# token likewise; with them, 0-2. Without the helper's answer, t_enqueue
# came at the read for 119-120 of 120, the queue off for 113-120; with it,
# 27-47: what stays is a busy helper's, whose ask and answer make no event.
# tgi-rs-mark, the same router with its append and its prefill call marked
# (uprobes on two functions of the Rust binary, the append bound to its
# request by the client's port, since a task resumes on any worker), holds
# issue 8's strict bound.
set -u
. "$(dirname "$0")/lib.sh"
require_root scen_tgi_rs
tt_setup
need_command scen_tgi_rs cargo cargo
export OUTDIR=$TT_TMP/runs
CONC="1 4 8" N=40 tools/scenarios/run.sh tgi-rs tgi-rs-mark >"$TT_TMP/run.log" 2>&1
check "scen_tgi_rs: tools/scenarios/run.sh tgi-rs tgi-rs-mark" [ $? = 0 ]
# tokio's threads were there, by the name the rules read
check "scen_tgi_rs: the recording names tokio's workers" \
	bash -c "'$TTFTRACE' report -e '$OUTDIR/tgi-rs/rec.ttft' 2>&1 |
		grep -q 'comm=tokio-runtime-w'"
# The shares: in eleven runs here t_dispatch and admission to token off
# 0-2 of 120, t_enqueue and the queue 27-47 (28-34 beside nothing); marked,
# 0 in five runs of six, 2 in one: a marker's uprobe is stamped when its
# handler runs, and a worker preempted at the trap (exit to user space
# schedules before it handles the uprobe) stamped two dispatches 1.1 ms
# late. Under ASan they double (scen_gate), as for the other scenarios.
scen_gate scen_tgi_rs tgi-rs:0.1:0.4:0.1:enq=0.4 \
	tgi-rs-mark:0.05:0.05:0.05:strict
