#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Regenerate vmlinux.h from the running kernel's BTF (CO-RE keeps it portable).
set -e
btf=${1:-/sys/kernel/btf/vmlinux}
out=$(dirname "$0")/vmlinux.h
[ -r "$btf" ] || { echo "gen.sh: no BTF at $btf" >&2; exit 1; }
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out from $btf"
