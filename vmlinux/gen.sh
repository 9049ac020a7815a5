#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Regenerate vmlinux/<arch>/vmlinux.h from a kernel's BTF (CO-RE keeps it
# portable across kernels of one architecture; the Makefile includes
# vmlinux/$(ARCH)). gen.sh [BTF [ARCH]]: the running kernel's by default;
# ARCH in the Makefile's names (x86, arm64, ...).
set -e
btf=${1:-/sys/kernel/btf/vmlinux}
arch=${2:-$(uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/;s/ppc64le/powerpc/;s/riscv64/riscv/;s/loongarch64/loongarch/')}
out=$(dirname "$0")/$arch/vmlinux.h
[ -r "$btf" ] || { echo "gen.sh: no BTF at $btf" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out from $btf"
