#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# report --html and diff --html: each page is one file that refers to
# nothing outside it (no URL, script, stylesheet link or image), shows a
# hostile thread name ("<img src=x>", then "<script>\"'&") escaped, and
# draws something: headless Chromium renders it to a PNG that
# tests/png_check.py finds is not blank. The page is never written through
# a symbolic link. TT_KEEP=1 keeps the pages and their screenshots.
set -u
HERE=$(dirname "$0")
. "$HERE/lib.sh"
require_root html
tt_setup
HELPER=$OUTPUT/tests/helper_named_server
CHROMIUM=$(command -v chromium || command -v chromium-browser)

for bin in "$TTFTRACE" "$DEMO_SERVER" "$LOADGEN" "$HELPER"; do
	[ -x "$bin" ] || { fail "binaries built: $bin missing (make; make unit-tests)"; exit 1; }
done

# a thread named '<script>"'&' at start, '<img src=x>' once serving
NAME1=3c7363726970743e222726
NAME2=3c696d67207372633d783e
start_named_server "$NAME1" "$NAME2"
record_load "$TT_TMP/names.ttft" -c 1 -n 6 --tokens 4
check "html: loadgen against the named server" [ "$LOADGEN_STATUS" = 0 ]

# two demo runs: B's prefill is 4 ms longer
run() {
	start_server "$TT_TMP/$1.gt.csv" --prefill-us "$2" -i 1000 -t 4 -w 2
	record_load "$TT_TMP/$1.ttft" -c 2 -n 30 --tokens 4
	check "html: loadgen, run $1" [ "$LOADGEN_STATUS" = 0 ]
}
run A 1000
run B 5000

"$TTFTRACE" report --html "$TT_TMP/names.html" "$TT_TMP/names.ttft" \
	>/dev/null 2>"$TT_TMP/err"
check "html: report --html of the named server exits 0" [ $? = 0 ]
"$TTFTRACE" report --html "$TT_TMP/report.html" --slo ttft=1s,tpot=1s \
	--price-per-hour 2 "$TT_TMP/A.ttft" >"$TT_TMP/report.txt" 2>>"$TT_TMP/err"
check "html: report --html exits 0" [ $? = 0 ]
# the page's figures are the text report's: throughput, SLO, cost
for key in throughput SLO cost; do
	line=$(grep -m1 "^$key" "$TT_TMP/report.txt" | cut -d: -f1 |
		sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g')
	check "html: the page has the report's '$key' figure" \
		grep -qF ">$line</td>" "$TT_TMP/report.html"
done
"$TTFTRACE" diff --html "$TT_TMP/diff.html" "$TT_TMP/A.ttft" "$TT_TMP/B.ttft" \
	>"$TT_TMP/diff.txt" 2>>"$TT_TMP/err"
check "html: diff --html exits 0" [ $? = 0 ]
sed 's/^/  /' "$TT_TMP/err"

# nothing fetched: no URL, no element or attribute that loads something
self_contained() {
	! grep -qiE 'https?://|<(script|link|img|iframe|object|embed)|@import|url\(|<[^>]*[[:space:]](src|href)=' "$1"
}
for page in names report diff; do
	check "html: $page.html is self-contained" self_contained "$TT_TMP/$page.html"
done
check "html: the hostile thread name is on the page, escaped" \
	grep -qF '&lt;img src=x&gt;' "$TT_TMP/names.html"
check "html: the verdict heads the diff page" \
	grep -qF "$(head -1 "$TT_TMP/diff.txt" | sed 's/&/\&amp;/g')" "$TT_TMP/diff.html"

# never through a link: the link's target stays as it was
echo keep >"$TT_TMP/target"
ln -s "$TT_TMP/target" "$TT_TMP/link.html"
"$TTFTRACE" report --html "$TT_TMP/link.html" "$TT_TMP/A.ttft" >/dev/null \
	2>"$TT_TMP/link.err"
rc=$?
check "html: --html onto a symbolic link is refused in one line" \
	[ "$rc" = 1 -a "$(wc -l <"$TT_TMP/link.err")" = 1 -a \
	  "$(cat "$TT_TMP/target")" = keep ]
cp "$TT_TMP/A.ttft" "$TT_TMP/copy.ttft"
"$TTFTRACE" diff --html "$TT_TMP/copy.ttft" "$TT_TMP/A.ttft" "$TT_TMP/B.ttft" \
	>/dev/null 2>"$TT_TMP/rec.err"
rc=$?
kept() {
	[ "$rc" = 1 ] && [ "$(wc -l <"$TT_TMP/rec.err")" = 1 ] &&
		cmp -s "$TT_TMP/A.ttft" "$TT_TMP/copy.ttft" &&
		[ ! -e "$TT_TMP/copy.ttft.old" ]
}
check "html: --html onto a recording is refused, the recording kept" kept

if [ -z "$CHROMIUM" ]; then
	echo "SKIP: html: screenshots need chromium (tools/deps.sh installs it)"
	exit 0
fi
for page in names report diff; do
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--hide-scrollbars --window-size=1000,2000 \
		--screenshot="$TT_TMP/$page.png" "file://$TT_TMP/$page.html" \
		>"$TT_TMP/$page.chromium.log" 2>&1
	if [ ! -s "$TT_TMP/$page.png" ]; then
		fail "html: chromium renders $page.html: $(tail -1 "$TT_TMP/$page.chromium.log")"
		continue
	fi
	out=$(python3 "$HERE/png_check.py" "$TT_TMP/$page.png" 16)
	rc=$?
	echo "  $out"
	check "html: the screenshot of $page.html is not blank" [ "$rc" = 0 ]
done
