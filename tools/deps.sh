#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Installs the Debian packages ttftrace needs to build and test; does
# nothing when they are all there.
set -e
pkgs="make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config
      libclang-rt-14-dev iproute2 python3 procps bpftrace
      python3-uvicorn python3-starlette python3-zmq python3-aiohttp golang-go chromium
      libmicrohttpd-dev prometheus"
# chromium: tests/test_html.sh renders the HTML pages headless.
# libmicrohttpd-dev: record --metrics; prometheus (and its promtool):
# tests/test_bpf_metrics.sh scrapes it.
# tools/scenarios/ also needs Node; a node installed from elsewhere (for
# example NodeSource's package) conflicts with Debian's, so only without one
command -v node >/dev/null 2>&1 || pkgs="$pkgs nodejs"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages:$missing (run as root to install)" >&2
	exit 1
fi
echo "deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
