#!/usr/bin/env bash
# Writes DIR/nginx.conf for a throwaway, single-process nginx that serves
# DIR/www on LISTEN_IP:PORT ("127.0.0.1:8080", "[fd00::9]:8080") and keeps
# every file it writes under DIR (logs, pid, temp paths): nothing under /var,
# no master process, no daemon. /norange/ serves the same files with range
# requests turned off. Prints the config's path, so a test can run:
#
#   conf=$(tests/support/nginx_conf.sh "$dir" 10.0.0.9:8080)
#   /usr/sbin/nginx -p "$dir/" -e "$dir/error.log" -c "$conf" &
#
# -e matters: without it nginx opens /var/log/nginx/error.log before it reads
# the config. NginxServer (nginx_server.h) runs this script for the unit tests.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 DIR LISTEN_IP:PORT [LIMIT_RATE]" >&2
  exit 2
fi
dir=$(realpath -m "$1")
listen=$2
# LIMIT_RATE (e.g. 5m, bytes per second): nginx's per-connection cap, like a
# storage server whose single connection is limited while its aggregate is
# not; one flow then reads at the cap and N flows at N times it.
limit_line=""
if [[ $# -eq 3 ]]; then
  limit_line=$'\n'"    limit_rate $3;"
fi
mkdir -p "$dir/www" "$dir/tmp"

# Run as root, nginx would chown its temp paths to "nobody"; name root so
# they stay ours. As another user the directive only draws a warning.
user_line=""
if [[ $(id -u) -eq 0 ]]; then
  user_line="user root;"
fi

cat >"$dir/nginx.conf" <<EOF
# Throwaway test nginx (tests/support): serves $dir/www on $listen.
$user_line
daemon off;
master_process off;
worker_processes 1;
error_log $dir/error.log warn;
pid $dir/nginx.pid;
events {
  worker_connections 4096;
  # One busy worker accepts one connection per event-loop turn otherwise,
  # so the last of N flows that connect together wait seconds for a byte.
  multi_accept on;
}
http {
  access_log off;
  client_body_temp_path $dir/tmp/client_body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  default_type application/octet-stream;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  server {
    listen $listen;
    root $dir/www;$limit_line
    location /norange/ {
      alias $dir/www/;
      max_ranges 0;
    }
  }
}
EOF
echo "$dir/nginx.conf"
