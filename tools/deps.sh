#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Installs the Debian packages ttftrace needs to build and test, and the
# npm package of the OTLP receiver of the tests (tools/otlp-receiver); does
# nothing when they are all there.
set -e
# otlp_receiver: OpenTelemetry's generated protobuf code, pinned by
# tools/otlp-receiver/package-lock.json, into its node_modules
otlp_receiver() {
	local dir
	dir=$(dirname "$0")/otlp-receiver
	[ -d "$dir/node_modules/@opentelemetry/otlp-transformer" ] && return 0
	echo "deps.sh: npm ci in $dir"
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
}
pkgs="make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config
      libclang-rt-14-dev iproute2 python3 procps bpftrace
      python3-uvicorn python3-starlette python3-zmq python3-aiohttp golang-go chromium
      python3-uvloop python3-httptools
      libmicrohttpd-dev prometheus libdeflate0 openjdk-17-jdk-headless
      librust-tokio-dev librust-libc-dev openssl libssl-dev libnghttp2-dev python3-grpcio golang-google-grpc-dev nginx caddy"
# libdeflate0: the recorder compresses with it when installed (zlib
# otherwise), in half the CPU (docs/design.md §5.2).
# chromium: tests/test_html.sh renders the HTML pages headless.
# openjdk-17-jdk-headless: tests/test_scen_java.sh builds and runs the
# Java scenario server (tools/scenarios/java_server.java).
# librust-tokio-dev, librust-libc-dev: tests/test_scen_tgi_rs.sh builds the
# Rust scenario router (tools/scenarios/tgi_rs) offline against Debian's
# crates, with the machine's cargo or Debian's (below).
# openssl: tests/test_bpf_tls.sh makes its servers' certificate; libssl-dev:
# tools/loadgen.c --tls; libnghttp2-dev: its --h2.
# python3-grpcio, golang-google-grpc-dev: the LocalAI-shaped scenario
# (tools/scenarios/localai_*), a Go front calling a Python backend over
# gRPC (tests/test_scen_go.sh).
# nginx, caddy: Debian's, the reverse proxies in front of a scenario server
# (tools/scenarios/proxy_front.sh, tests/test_scen_py.sh); its own service is
# not left running (below).
# python3-uvloop, python3-httptools: uvicorn as vLLM runs it
# (tools/scenarios/run.sh vllm-uvloop).
# libmicrohttpd-dev: record --metrics; prometheus (and its promtool):
# tests/test_bpf_metrics.sh scrapes it.
# tools/scenarios/ also needs Node; a node installed from elsewhere (for
# example NodeSource's package) conflicts with Debian's, so only without one
command -v node >/dev/null 2>&1 || pkgs="$pkgs nodejs"
command -v npm >/dev/null 2>&1 || pkgs="$pkgs npm"
command -v cargo >/dev/null 2>&1 || pkgs="$pkgs cargo"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	otlp_receiver
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages:$missing (run as root to install)" >&2
	exit 1
fi
echo "deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
# a package's install may start its service (nginx on port 80, where no
# policy-rc.d stops it); the scenarios run their own
case " $missing " in
*" nginx "*) [ ! -x /etc/init.d/nginx ] || /etc/init.d/nginx stop >/dev/null 2>&1 || true ;;
esac
otlp_receiver
