#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# Root's recorder next to a hostile user (issue 13, item 1): a user who can
# write the output's directory plants symbolic links at the output path, in
# a loop, while root records; root must never write through one. The victim
# is a root-owned 0644 file elsewhere: its content, mode and owner must not
# change, in any of the runs. Also: an existing link at the output path is
# refused, and the FILE.old rotation replaces a planted FILE.old link
# instead of writing through it.
set -u
. "$(dirname "$0")/lib.sh"
require_root sec_output
tt_setup
RUNS=${SEC_RUNS:-12}

# the attacker's directory: theirs, so that no sticky-bit protection applies
ATTACK=$(mktemp -d /tmp/ttftrace-attack.XXXXXX)
chown nobody "$ATTACK"
chmod 0755 "$ATTACK"
trap 'kill $ATTACKER 2>/dev/null; wait $ATTACKER 2>/dev/null; rm -rf "$ATTACK"; tt_cleanup' EXIT
VICTIM=$TT_TMP/victim
printf 'precious root file\n' >"$VICTIM"
chmod 0644 "$VICTIM"
chmod 0755 "$TT_TMP"
victim_sum() { stat -c '%a %U %s' "$VICTIM"; md5sum <"$VICTIM"; }
before=$(victim_sum)
OUT=$ATTACK/out.ttft

# plants a link whenever the output path is free: right after root's
# record moved an old file aside or removed a probe file
setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c \
	'while :; do [ -e "$1" ] || [ -L "$1" ] || ln -s "$2" "$1" 2>/dev/null; done' \
	attacker "$OUT" "$VICTIM" &
ATTACKER=$!
sleep 0.2

# the target is this shell, which lives as long as the test: a `sleep 60`
# of its own was gone after 5 of 12 runs in one CI run, and the checks
# after it read "no such process" where they meant to see a refusal
TARGET=$$
ok_runs=0 refused=0
for i in $(seq "$RUNS"); do
	# an earlier recording at the path: moving it aside opens the window
	# (made aside and renamed in: a write by name would follow a planted link)
	printf 'an old recording\n' >"$TT_TMP/old"
	mv -fT "$TT_TMP/old" "$OUT"
	rm -f "$OUT.old"
	if "$TTFTRACE" record -q -p "$TARGET" -d 0.3 -o "$OUT" 2>"$TT_TMP/rec.$i.log"; then
		ok_runs=$((ok_runs + 1))
	else
		refused=$((refused + 1))
	fi
	[ "$(victim_sum)" = "$before" ] || break
done
after=$(victim_sum)
check "sec_output: $RUNS records against a link-planting user: victim unchanged ($ok_runs recorded, $refused refused)" \
	[ "$after" = "$before" ]
kill "$ATTACKER" 2>/dev/null
wait "$ATTACKER" 2>/dev/null
printf 'refusals said: %s\n' "$(cat "$TT_TMP"/rec.*.log 2>/dev/null | sort | uniq -c | head -3)"

# a link already at the output path: refused in one line, nothing written
rm -f "$OUT" "$OUT.old"
ln -s "$VICTIM" "$OUT"
err=$("$TTFTRACE" record -q -p "$TARGET" -d 0.2 -o "$OUT" 2>&1)
rc=$?
refused_link() { [ "$1" = 1 ] && [[ "$2" == *"symbolic link"* ]]; }
check "sec_output: a link at the output path is refused (status $rc: $err)" \
	refused_link "$rc" "$err"
check "sec_output: ... and the victim is unchanged" [ "$(victim_sum)" = "$before" ]

# FILE.old planted as a link: the rotation replaces the link itself
rm -f "$OUT" "$OUT.old"
printf 'an old recording\n' >"$TT_TMP/old"
mv -fT "$TT_TMP/old" "$OUT"
ln -s "$VICTIM" "$OUT.old"
"$TTFTRACE" record -q -p "$TARGET" -d 0.2 -o "$OUT" 2>"$TT_TMP/rot.log"
rc=$?
check "sec_output: rotation onto a planted FILE.old link leaves the victim alone (status $rc)" \
	[ "$(victim_sum)" = "$before" ]
old_is_regular() { [ ! -L "$1" ] && grep -q 'an old recording' "$1"; }
check "sec_output: ... FILE.old is the old recording, a regular file" \
	old_is_regular "$OUT.old"
reads_back() { "$TTFTRACE" report "$1" >/dev/null 2>&1; }
check "sec_output: ... and the new recording reads back" reads_back "$OUT"
