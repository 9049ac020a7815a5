#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# Output a user can trust (issue 13, items 9 and 10), end to end: a traced
# server thread names itself with prctl(PR_SET_NAME), at start with bytes
# that are not UTF-8 and an escape sequence, and again at its first request
# with a name that clears the screen and fakes a report line. Recorded for
# real, `report --json` and `report -P` must be JSON that a strict UTF-8
# decoder and parser accept, and `report -R` and `--events` must carry no
# raw ESC byte and no faked line.
set -u
. "$(dirname "$0")/lib.sh"
require_root trust_names
tt_setup
HELPER=$OUTPUT/tests/helper_named_server
[ -x "$HELPER" ] || { fail "trust_names: $HELPER missing (make unit-tests)"; exit 1; }

# "\x1b[2J\xff\xfe\nok" and "\x1b[2J\x1b[H\nTTFT 1\xff" (15 bytes: comm's
# room); outputs show a thread's latest name, the second
NAME1=1b5b324afffe0a6f6b
NAME2=1b5b324a1b5b480a545446542031ff
start_named_server "$NAME1" "$NAME2"

REC=$TT_TMP/names.ttft
start_record "$REC" -p "$SERVER_PID"
python3 - "$PORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
body = b'{"prompt":"hi","max_tokens":4,"stream":true}'
for _ in range(5):
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body) + body)
    got = b""
    while b"data: [DONE]\n\n" not in got:
        chunk = s.recv(4096)
        if not chunk:
            sys.exit("server closed")
        got += chunk
s.close()
PY
sleep 0.3
stop_record
check "trust_names: record exits 0" [ "$RECORD_STATUS" = 0 ]

"$TTFTRACE" report --json "$REC" >"$TT_TMP/report.json" 2>"$TT_TMP/report.err"
"$TTFTRACE" report -P "$TT_TMP/trace.json" "$REC" >/dev/null 2>>"$TT_TMP/report.err"
"$TTFTRACE" report -R 1 "$REC" >"$TT_TMP/request.txt" 2>>"$TT_TMP/report.err"
"$TTFTRACE" report --events "$REC" >"$TT_TMP/events.txt" 2>>"$TT_TMP/report.err"
"$TTFTRACE" report --requests "$REC" >"$TT_TMP/summary.txt" 2>>"$TT_TMP/report.err"

# strict: bytes decoded as UTF-8 with errors raising, then json.loads
strict_json() {
	python3 - "$1" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
try:
    json.loads(raw.decode("utf-8", errors="strict"))
except Exception as e:
    print("  %s: %s" % (sys.argv[1], e))
    sys.exit(1)
PY
}
check "trust_names: report --json is strict UTF-8 JSON" strict_json "$TT_TMP/report.json"
check "trust_names: report -P is strict UTF-8 JSON" strict_json "$TT_TMP/trace.json"
# the recording saw the hostile names (else the checks above prove nothing)
names=$(python3 - "$TT_TMP/report.json" "$TT_TMP/trace.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1], encoding="utf-8"))
tr = json.load(open(sys.argv[2], encoding="utf-8"))
seen = set()
for r in rep.get("requests", []):
    if "writer_comm" in r:
        seen.add(r["writer_comm"])
evs = tr["traceEvents"] if isinstance(tr, dict) else tr
for e in evs:
    if e.get("ph") == "M" and e.get("name") == "thread_name":
        seen.add(e["args"]["name"])
print(len(rep.get("requests", [])),
      sum(1 for s in seen if "\x1b[H\nTTFT" in s and "\ufffd" in s))
PY
)
read -r nreq hostile <<<"$names"
check "trust_names: requests recorded: ${nreq:-0} (5 sent)" [ "${nreq:-0}" -ge 1 ]
check "trust_names: the hostile name came through, escaped, in ${hostile:-0} JSON names" \
	[ "${hostile:-0}" -ge 1 ]

no_raw_escape() { ! grep -q $'\x1b' "$1"; }
no_fake_line() { ! grep -q '^TTFT 1' "$1"; }
for f in request events summary; do
	check "trust_names: report output ($f) has no raw ESC byte" no_raw_escape "$TT_TMP/$f.txt"
	check "trust_names: report output ($f) has no faked line" no_fake_line "$TT_TMP/$f.txt"
done
check "trust_names: -R shows the name escaped" grep -q '\\x1b\[2J\\x1b\[H\\nTTFT 1' "$TT_TMP/request.txt"
[ -s "$TT_TMP/report.err" ] && sed 's/^/  report said: /' "$TT_TMP/report.err" | head -5
exit 0
