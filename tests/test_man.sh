#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The man page cannot go stale silently: every command that ttftrace
# --help lists has its section in docs/ttftrace.1, and every option its
# --help lists (long and short) is in the rendered page; groff renders it
# without a warning; make install puts the binary, the page and the bash
# completion under DESTDIR/PREFIX; the completion completes commands and
# options; --version says the Makefile's version.
set -u
. "$(dirname "$0")/lib.sh"
tt_setup
MAN=$TT_TESTS_DIR/../docs/ttftrace.1

out=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
check "groff renders the man page without a warning${out:+: $out}" [ -z "$out" ]
LC_ALL=C MANWIDTH=250 man -l "$MAN" 2>/dev/null | col -b >"$TT_TMP/man.txt"
check "man renders it" grep -q "^NAME" "$TT_TMP/man.txt"
cmds=$("$TTFTRACE" --help | awk '/^Commands:/ { on = 1; next } on && !NF { exit } on { print $1 }')
check "ttftrace --help lists commands ($(echo $cmds))" [ -n "$cmds" ]
for c in $cmds; do
	check "man page: a section for $c" grep -q "^\.SS $c\$" "$MAN"
	opts=$("$TTFTRACE" "$c" --help | grep -oE -- '^ +(-[A-Za-z?], )?--[a-z][a-z-]*' |
		tr -d ' ' | tr ',' '\n')
	missing=
	for o in $opts; do
		grep -qF -- "$o" "$TT_TMP/man.txt" || missing="$missing $o"
	done
	check "man page: every option of $c --help ($(echo $opts | wc -w))${missing:+, missing:$missing}" \
		[ -n "$opts" ] && [ -z "$missing" ]
done
check "ttftrace --version says VERSION ($("$TTFTRACE" --version))" \
	bash -c "'$TTFTRACE' --version | grep -q \"^ttftrace $(cat "$TT_TESTS_DIR/../VERSION")\""
check "ttftrace top --version says the same" \
	[ "$("$TTFTRACE" top --version)" = "$("$TTFTRACE" --version)" ]

# the build under test, with its flags (make SANITIZE=1 test builds in build-san)
san=
case $OUTPUT in *san*) san=1 ;; esac
make -s -C "$TT_TESTS_DIR/.." OUTPUT="$(realpath "$OUTPUT")" SANITIZE=$san install \
	DESTDIR="$TT_TMP/root" PREFIX=/usr >/dev/null 2>&1
for f in bin/ttftrace share/man/man1/ttftrace.1 share/bash-completion/completions/ttftrace; do
	check "make install DESTDIR PREFIX=/usr puts $f" [ -s "$TT_TMP/root/usr/$f" ]
done

complete_words() { # complete_words WORD...: the completion of the last word
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
		_ttftrace; echo "${COMPREPLY[*]}"' _ "$TT_TESTS_DIR/../completions/ttftrace" "$@"
}
check "completion: 'ttftrace to' -> top" [ "$(complete_words "$TTFTRACE" to)" = top ]
check "completion: 'ttftrace top --re' -> --replay" [ "$(complete_words "$TTFTRACE" top --re)" = --replay ]
check "completion: 'ttftrace record --met' -> --metrics" [ "$(complete_words "$TTFTRACE" record --met)" = --metrics ]
check "completion: 'ttftrace top -s t' -> ttft tpot" [ "$(complete_words "$TTFTRACE" top -s t)" = "ttft tpot" ]
exit ${TT_FAILED:-0}
