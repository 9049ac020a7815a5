#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Privilege, environment and bad input (issue 5): every refusal is one clear
# line on stderr naming what is wrong or missing, with a non-zero status.
#  - bad options and files (no root needed)
#  - not root, no capabilities; CAP_BPF + CAP_PERFMON alone (README: enough)
#  - no BTF: /sys/kernel/btf hidden under an empty tmpfs in a private mount
#    namespace
#  - a kernel missing a tracepoint: in a private mount namespace, a copy of
#    tracefs's event ids without syscalls/sys_enter_sendmsg, where libbpf
#    looks first (/sys/kernel/debug/tracing)
# A kernel missing a tp_btf tracepoint cannot be simulated here (its BTF
# would have to change); those hooks go through the same attach path.
set -u
. "$(dirname "$0")/lib.sh"
tt_setup
CORPUS=$(dirname "$0")/fuzz/corpus
# argp adds its hint after the message: "Try `ttftrace record --help' or
# `ttftrace record --usage' for more information.", wrapped on two lines
ARGP_HINT='^(Try `ttftrace [a-z]+ --help|information\.$)'

# refuses STATUS WORDS CMD...: CMD exits STATUS and its stderr is one line
# (plus argp's hint) containing each of the |-separated WORDS
refuses() {
	local want=$1 words=$2 err rc msg w
	shift 2
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	msg=$(printf '%s\n' "$err" | grep -vE "$ARGP_HINT")
	REFUSAL="status $rc: $(printf '%s' "$err" | head -n 1)"
	[ "$rc" = "$want" ] || return 1
	[ "$(printf '%s\n' "$msg" | grep -c .)" = 1 ] || return 1
	IFS='|'
	for w in $words; do
		if ! grep -qiF -- "$w" <<<"$msg"; then
			unset IFS
			return 1
		fi
	done
	unset IFS
}
# expect_refusal NAME STATUS WORDS CMD...
expect_refusal() {
	local name=$1
	shift
	if refuses "$@"; then
		pass "rel_env: $name ($REFUSAL)"
	else
		fail "rel_env: $name: want status $1, one line with '$2'; got $REFUSAL"
	fi
}

# ---- bad options: status 2, before anything else happens
R=("$TTFTRACE" record)
expect_refusal "record without a target" 2 "nothing to trace" "${R[@]}"
expect_refusal "record -p abc" 2 "invalid PID|abc" "${R[@]}" -p abc
expect_refusal "record -p 0" 2 "invalid PID" "${R[@]}" -p 0
expect_refusal "record -p -5" 2 "invalid PID" "${R[@]}" -p -5
expect_refusal "record -p 99999999" 2 "invalid PID" "${R[@]}" -p 99999999
expect_refusal "record -d 0" 2 "invalid duration|'0'" "${R[@]}" -p 1 -d 0
expect_refusal "record -d -1" 2 "invalid duration" "${R[@]}" -p 1 -d -1
expect_refusal "record -d 5x" 2 "invalid duration|5x" "${R[@]}" -p 1 -d 5x
expect_refusal "record -b 1000" 2 "ring buffer size|1000" "${R[@]}" -p 1 -b 1000
expect_refusal "record -b 3000 (not a power of two)" 2 "power of two" \
	"${R[@]}" -p 1 -b 3000
expect_refusal "record -b 2G (too big)" 2 "ring buffer size" "${R[@]}" -p 1 -b 2G
expect_refusal "record -o ''" 2 "output" "${R[@]}" -p 1 -o ''
expect_refusal "record -P bogus" 2 "gpu-probes|bogus" "${R[@]}" -p 1 -P bogus
expect_refusal "record --bogus" 2 "bogus" "${R[@]}" --bogus
expect_refusal "record with a stray argument" 2 "stray" "${R[@]}" -p 1 stray
expect_refusal "report without a file" 2 "which recording" \
	"$TTFTRACE" report
expect_refusal "report of two files" 2 "one recording" \
	"$TTFTRACE" report a b
expect_refusal "report --bogus" 2 "bogus" "$TTFTRACE" report --bogus
expect_refusal "unknown command" 2 "unknown command|bogus" "$TTFTRACE" bogus
expect_refusal "check with an argument" 2 "argument" "$TTFTRACE" check x

# ---- bad files: status 1, one line naming the file and the problem
: >"$TT_TMP/empty.ttft"
head -c 20 "$CORPUS/valid-three-blocks" >"$TT_TMP/short-header.ttft"
expect_refusal "report of a missing file" 1 \
	"$TT_TMP/none.ttft|No such file" "$TTFTRACE" report "$TT_TMP/none.ttft"
expect_refusal "report of a directory" 1 "$TT_TMP|directory" \
	"$TTFTRACE" report "$TT_TMP"
expect_refusal "report of an empty file" 1 "empty.ttft|empty" \
	"$TTFTRACE" report "$TT_TMP/empty.ttft"
expect_refusal "report of a file that is no recording" 1 \
	"/etc/passwd|not a ttftrace recording" "$TTFTRACE" report /etc/passwd
expect_refusal "report of a file cut inside its header" 1 "short-header" \
	"$TTFTRACE" report "$TT_TMP/short-header.ttft"
# damaged data: reported, with one warning line
warns() { # warns WORDS FILE: report exits 0 with one warning naming WORDS
	local err rc
	err=$("$TTFTRACE" report "$2" 2>&1 >/dev/null)
	rc=$?
	REFUSAL="status $rc: $err"
	[ $rc = 0 ] && [ "$(printf '%s\n' "$err" | grep -c .)" = 1 ] &&
		grep -q "$1" <<<"$err"
}
check "rel_env: report of a file with a corrupt block warns and goes on" \
	warns "corrupt block" "$CORPUS/corrupt-block-data"
check "rel_env: report of a file cut mid-block warns and goes on" \
	warns "cut short" "$CORPUS/truncated-mid-block"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: rel_env: privilege, BTF and tracepoint cases: need root"
	exit 0
fi

# ---- runtime refusals of record, as root
sleep 0.1 &
dead=$!
wait $dead
expect_refusal "record -p of a PID that is gone" 1 "no such process|$dead" \
	"${R[@]}" -p $dead -o "$TT_TMP/x.ttft"
expect_refusal "record -o in a directory that does not exist" 1 \
	"cannot create|$TT_TMP/no/x.ttft" "${R[@]}" -p $$ -o "$TT_TMP/no/x.ttft"
expect_refusal "record -L of a missing library" 1 "$TT_TMP/libcuda.so.1" \
	"${R[@]}" -p $$ -o "$TT_TMP/x.ttft" -L "$TT_TMP/libcuda.so.1"
# an existing recording is moved to FILE.old; a directory or a device
# named by mistake must stay where it is (think -o /var/log, -o /dev/null)
mkdir "$TT_TMP/adir"
touch "$TT_TMP/adir/keep"
mknod "$TT_TMP/anull" c 1 3
left_alone() { # left_alone NAME TEST: TEST NAME holds, no NAME.old
	[ ! -e "$TT_TMP/$1.old" ] && test "$2" "$TT_TMP/$1"
}
for target in "adir directory -d" "anull character-device -c"; do
	read -r name what test <<<"$target"
	"${R[@]}" -q -p $$ -d 0.2 -o "$TT_TMP/$name" >/dev/null 2>&1
	check "rel_env: record -o of an existing ${what/-/ } leaves it in place ($(
		cd "$TT_TMP" && echo "$name"*))" left_alone "$name" "$test"
done
check "rel_env: ... and what the directory held" [ -e "$TT_TMP/adir/keep" ]

# ---- privileges: a copy of the binary that nobody may run
mkdir -p "$TT_TMP/bin" "$TT_TMP/out"
cp "$TTFTRACE" "$TT_TMP/bin/ttftrace"
chmod 755 "$TT_TMP" "$TT_TMP/bin" "$TT_TMP/bin/ttftrace"
chmod 777 "$TT_TMP/out"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
expect_refusal "not root, no capabilities: record" 1 \
	"root|CAP_BPF|CAP_PERFMON" \
	"${NOBODY[@]}" "$TT_TMP/bin/ttftrace" record -p $$ -o "$TT_TMP/out/x.ttft"
out=$("${NOBODY[@]}" "$TT_TMP/bin/ttftrace" check 2>&1)
rc=$?
check_says_no_privileges() {
	[ $rc = 1 ] && grep -q '^privileges  *no: .*CAP_BPF' <<<"$out" &&
		[ "$(tail -n 1 <<<"$out")" = "ttftrace can run here: no (privileges)" ]
}
check "rel_env: not root, no capabilities: check says so (status $rc: $(tail -n 1 <<<"$out"))" \
	check_says_no_privileges

# README: root, or CAP_BPF + CAP_PERFMON. With just those two, record must
# work, or refuse in one line that names what else it needs.
CAPS=('--inh-caps=+bpf,+perfmon' '--ambient-caps=+bpf,+perfmon')
(cd "$TT_TMP/out" && "${NOBODY[@]}" "${CAPS[@]}" "$TT_TMP/bin/ttftrace" \
	record -q -o "$TT_TMP/out/caps.ttft" -c 'sleep 0.3') \
	>/dev/null 2>"$TT_TMP/caps.err"
rc=$?
caps_ok() {
	[ $rc = 0 ] || { [ "$(grep -c . "$TT_TMP/caps.err")" = 1 ] &&
		grep -qiE 'tracefs|/sys/kernel/tracing|CAP_DAC|tracepoint' \
			"$TT_TMP/caps.err"; }
}
check "rel_env: CAP_BPF + CAP_PERFMON only: record works or names what else it needs (status $rc: $(head -n 1 "$TT_TMP/caps.err"))" \
	caps_ok

# ---- no BTF: an empty tmpfs over /sys/kernel/btf, in a mount namespace
# ns CMD...: CMD in a private mount namespace (setup in $NS_SETUP)
ns() {
	unshare -m --propagation private sh -c "$NS_SETUP"' && exec "$@"' \
		sh "$@"
}
NS_SETUP='mount -t tmpfs none /sys/kernel/btf'
if ! ns true 2>/dev/null; then
	fail "rel_env: cannot hide /sys/kernel/btf in a mount namespace"
else
	expect_refusal "no BTF: record" 1 "BTF|CONFIG_DEBUG_INFO_BTF" \
		ns "$TTFTRACE" record -p $$ -o "$TT_TMP/x.ttft"
	out=$(ns "$TTFTRACE" check 2>&1)
	rc=$?
	no_btf_check() {
		[ $rc = 1 ] && grep -q '^BTF .* no: needs CONFIG_DEBUG_INFO_BTF' <<<"$out" &&
			[ "$(tail -n 1 <<<"$out")" = "ttftrace can run here: no" ]
	}
	check "rel_env: no BTF: check says so (status $rc: $(grep '^BTF' <<<"$out"))" \
		no_btf_check
fi

# ---- a missing tracepoint: tracefs event ids without one of them
MISSING=syscalls/sys_enter_sendmsg
FAKE=$TT_TMP/debug
mkdir -p "$FAKE/tracing"
# ttftrace's and check's tracepoints are all syscalls ones (tp_btf hooks
# do not use tracefs); builtins only: there are 700 of them
tp_dirs=(/sys/kernel/tracing/events/syscalls/*/)
mkdir -p "${tp_dirs[@]/#\/sys\/kernel/$FAKE}"
for d in "${tp_dirs[@]}"; do
	[ "$d" = "/sys/kernel/tracing/events/$MISSING/" ] && continue
	[ -e "$d/id" ] && read -r id <"$d/id" &&
		echo "$id" >"$FAKE/${d#/sys/kernel/}id"
done
NS_SETUP="mount --bind $FAKE /sys/kernel/debug"
if ! ns test -e /sys/kernel/debug/tracing/events/syscalls/sys_enter_write/id \
	2>/dev/null; then
	fail "rel_env: cannot set up a tracefs without $MISSING"
else
	expect_refusal "missing tracepoint: record names it" 1 \
		"${MISSING#*/}" ns "$TTFTRACE" record -p $$ -o "$TT_TMP/x.ttft"
	out=$(ns "$TTFTRACE" check 2>&1)
	rc=$?
	missing_check() {
		[ $rc = 1 ] && grep -q "hook tracepoint/$MISSING *no: " <<<"$out" &&
			[ "$(grep -c ' no: ' <<<"$out")" -le 4 ] &&
			[ "$(tail -n 1 <<<"$out")" = "ttftrace can run here: no" ]
	}
	check "rel_env: missing tracepoint: check names it, and only it (status $rc: $(grep ' no: ' <<<"$out" | tr -s ' ' | tr '\n' ';'))" \
		missing_check
fi

# ---- check's format on this kernel: "NAME yes" or "NAME no: why" lines
out=$("$TTFTRACE" check 2>&1)
rc=$?
check_format() {
	[ $rc = 0 ] &&
		[ "$(tail -n 1 <<<"$out")" = "ttftrace can run here: yes" ] &&
		! head -n -1 <<<"$out" | grep -vqE '^ *[^ ].* (yes|no: .+)$'
}
check "rel_env: check on this kernel: every line says yes or no: why, and it can run (status $rc)" \
	check_format
[ -z "${TT_FAILED:-}" ]
