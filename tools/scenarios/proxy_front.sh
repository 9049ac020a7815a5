#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Scenario: a real reverse proxy in front of a server, as most deployments
# put one (TLS, auth, rate limits) before vLLM: Debian's nginx or Caddy.
#
#   proxy_front.sh -p PORT -d DIR [--caddy] [--h10] [--buffered] [--tls CERT,KEY [--h2]] -- SERVER_CMD...
#
# Starts SERVER_CMD with "-p UPSTREAM" on a free loopback port, waits until it
# listens, writes the proxy's config into DIR (its pid file, logs and state
# too) and runs the proxy in the foreground on 127.0.0.1:PORT.
# nginx: its master and 2 workers (worker_processes auto on 2 CPUs), set as
# SSE guides say: proxy_buffering off (each token forwarded as it comes)
# and, unless --h10, HTTP/1.1 to the upstream over a keep-alive pool
# (proxy_http_version 1.1, keepalive 16). --h10 is nginx's default
# proxying: HTTP/1.0 and a new upstream connection per request, the
# response delimited by its close. --buffered leaves proxy_buffering on,
# nginx's default, as vLLM's own nginx example does.
# --caddy: Caddy 2 (a Go program, stripped as Debian builds it) with a
# Caddyfile's reverse_proxy: HTTP/1.1 keep-alive upstream, each write
# flushed (flush_interval -1), no admin endpoint.
# --tls: the proxy terminates TLS on PORT (HTTPS) with that certificate
# and key, as a deployment's front does; the upstream stays plain HTTP.
# nginx's TLS is OpenSSL's (libssl.so.3), Caddy's Go's crypto/tls.
# --h2: HTTP/2 offered to the clients too (ALPN h2, as browsers and curl
# take it): nginx's "listen ... ssl http2"; Caddy offers it with TLS by
# default. The upstream stays HTTP/1.1.
# The proxy names each client's port in X-Client-Port, which the server
# logs as its truth row's port (vllm_server.client_port()). Both run in the
# recorder's process group: its SIGTERM stops them.
set -u

die() {
	echo "proxy_front.sh: $*" >&2
	exit 1
}

port='' dir='' proxy=nginx h10='' buffering='proxy_buffering off;' tls='' h2=''
while [ $# -gt 0 ]; do
	case $1 in
	-p) port=$2 && shift 2 ;;
	-d) dir=$2 && shift 2 ;;
	--caddy) proxy=caddy && shift ;;
	--h10) h10=1 && shift ;;
	--buffered) buffering='' && shift ;;
	--tls) tls=$2 && shift 2 ;;
	--h2) h2=1 && shift ;;
	--) shift && break ;;
	*) die "unknown option $1" ;;
	esac
done
[ -n "$port" ] && [ -n "$dir" ] && [ $# -gt 0 ] ||
	die "usage: -p PORT -d DIR [--caddy] [--h10] [--buffered] [--tls CERT,KEY [--h2]] -- SERVER_CMD..."
command -v "$proxy" >/dev/null || die "$proxy is not installed (tools/deps.sh)"
mkdir -p "$dir" || die "cannot make $dir"
# --tls: each proxy's lines for it, empty without
scheme=http caddy_tls='' listen_ssl='' nginx_tls=''
if [ -n "$tls" ]; then
	cert=${tls%,*} key=${tls#*,}
	[ -r "$cert" ] && [ -r "$key" ] || die "--tls '$tls': want CERT,KEY, both readable"
	scheme=https caddy_tls="tls $cert $key" listen_ssl=' ssl'
	nginx_tls="ssl_certificate $cert; ssl_certificate_key $key;"
	[ -n "$h2" ] && listen_ssl=' ssl http2'
fi
[ -z "$h2" ] || [ -n "$tls" ] || die "--h2 wants --tls (browsers speak HTTP/2 over TLS only)"

. "$(dirname "$0")/../free_port.sh"
upstream=$(free_port)
"$@" -p "$upstream" &
server=$!
for _ in $(seq 300); do
	ss -Hltn "sport = :$upstream" | grep -q . && break
	kill -0 "$server" 2>/dev/null || die "the server exited before it listened: $*"
	sleep 0.1
done
ss -Hltn "sport = :$upstream" | grep -q . || die "the server did not listen on $upstream: $*"

if [ "$proxy" = caddy ]; then
	cat >"$dir/Caddyfile" <<EOF || die "cannot write $dir/Caddyfile"
{
	admin off
	auto_https off
	log {
		output file $dir/caddy.log
	}
}
$scheme://127.0.0.1:$port {
	bind 127.0.0.1
	$caddy_tls
	reverse_proxy 127.0.0.1:$upstream {
		header_up X-Client-Port {remote_port}
		flush_interval -1
	}
}
EOF
	# its state (certificates, autosaved config) in DIR, not in HOME
	export HOME=$dir XDG_DATA_HOME=$dir XDG_CONFIG_HOME=$dir
	exec caddy run --config "$dir/Caddyfile" --adapter caddyfile 2>>"$dir/caddy.log"
fi

if [ -n "$h10" ]; then
	pool='' proto=''
else
	pool='keepalive 16;'
	proto='proxy_http_version 1.1; proxy_set_header Connection "";'
fi
cat >"$dir/nginx.conf" <<EOF || die "cannot write $dir/nginx.conf"
worker_processes auto;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $dir/body;
	proxy_temp_path $dir/proxy;
	fastcgi_temp_path $dir/fastcgi;
	uwsgi_temp_path $dir/uwsgi;
	scgi_temp_path $dir/scgi;
	upstream engine { server 127.0.0.1:$upstream; $pool }
	server {
		listen 127.0.0.1:$port$listen_ssl;
		$nginx_tls
		location / {
			proxy_pass http://engine;
			$proto
			$buffering
			proxy_set_header X-Client-Port \$remote_port;
		}
	}
}
EOF
# nginx's master stays this process; the server is its (inherited) child
exec nginx -c "$dir/nginx.conf"
