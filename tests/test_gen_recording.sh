#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The synthetic recording bench/analyzer.sh times report on must be one that
# report understands whole: every generated request found, complete and
# attributed, or its figures would time a report of broken requests.
set -u
. "$(dirname "$0")/lib.sh"
tt_setup
need_gen
for seed in 1 2; do
	line=$("$GEN" -n 200000 -c 50 -r 100 -t 16 -s $seed "$TT_TMP/g$seed.ttft")
	check "seed $seed: gen_recording writes a recording" [ -s "$TT_TMP/g$seed.ttft" ]
	generated=$(echo "$line" | awk '{ print $4 }')
	if ! "$TTFTRACE" report --json "$TT_TMP/g$seed.ttft" >"$TT_TMP/g$seed.json"; then
		fail "seed $seed: report reads it"
		continue
	fi
	python3 - "$TT_TMP/g$seed.json" "$generated" "$seed" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["TT_TESTS_DIR"])
from rel_check import Checks  # noqa: E402

rep = json.load(open(sys.argv[1]))
generated, seed = int(sys.argv[2]), sys.argv[3]
reqs = rep["requests"]
done = [r for r in reqs if r["complete"]]
checks = Checks(f"seed {seed}")
checks.check("every generated request found and complete",
             len(reqs) == generated and len(done) == generated,
             f"{len(done)} complete of {len(reqs)}, generated {generated}")
unattributed = [r["id"] for r in done if not r.get("attributed")]
checks.check("complete requests attributed", not unattributed and done,
             f"{len(unattributed)} not: {unattributed[:5]}")
checks.closure("complete requests' stages sum to their TTFT", reqs)
PY
done
[ -z "${TT_FAILED:-}" ]
