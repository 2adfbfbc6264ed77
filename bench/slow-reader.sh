#!/usr/bin/env bash
# A slow reader of a 1 GiB answer: one `keyward serve` (release build) proxies a 1 GiB file from a
# local nginx origin to a client that reads 16 MiB and then stops reading for PAUSE seconds. Prints
# Keyward's resident memory before, while the client has stopped, and its peak, and the bytes
# Keyward's upstream socket received while the client did not read: if the transfer is paused
# (libcurl's pause when the client socket would block) rather than buffered, that count stops
# moving at a few MiB of socket buffers and the RSS does not grow with the answer.
#
# Usage: bench/slow-reader.sh [pause-seconds (default 10)]
# KEYWARD_BIN=path uses a prebuilt binary instead of building `-c release --static-swift-stdlib`.
set -euo pipefail
cd "$(dirname "$0")/.."
pause="${1:-10}"
command -v nginx >/dev/null || { echo "needs nginx (apt-get install nginx-light)" >&2; exit 1; }
if [ -z "${KEYWARD_BIN:-}" ]; then
  swift build -c release --product keyward --static-swift-stdlib >/dev/null
  KEYWARD_BIN="$(swift build -c release --show-bin-path)/keyward"
fi

source bench/common.sh
bench_work_dir
upstream_port=$(free_port); keyward_port=$(free_port); admin_port=$(free_port)

# The origin: nginx serving a sparse 1 GiB file (reads as zeros) with a Content-Length.
mkdir -p "$work/origin/logs" "$work/origin/www/v1"
truncate -s 1G "$work/origin/www/v1/big"
chmod a+rx "$work" "$work/origin" "$work/origin/www" "$work/origin/www/v1"  # nginx workers run as nobody under root
chmod a+r "$work/origin/www/v1/big"
cat > "$work/origin/nginx.conf" <<CONF
worker_processes 1;
pid $work/origin/nginx.pid;
error_log $work/origin/logs/error.log error;
events { worker_connections 64; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$upstream_port;
    root $work/origin/www;
    default_type application/octet-stream;
  }
}
CONF
nginx -p "$work/origin" -c "$work/origin/nginx.conf"

cat > "$work/providers.toml" <<TOML
[big]
base_url = "http://127.0.0.1:$upstream_port"
allow_http_loopback = true
secret = "BIG_KEY"
auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
allow = [{ method = "GET", path = "/v1/big" }]
idle_timeout_ms = $(( (pause + 30) * 1000 ))
TOML
cat > "$work/keyward.toml" <<TOML
providers_file = "providers.toml"
[listen]
proxy = "127.0.0.1:$keyward_port"
admin = "127.0.0.1:$admin_port"
[store]
url = "sqlite://$work/keyward.db"
[shutdown]
readiness_grace_seconds = 0
drain_seconds = 1
TOML
export KEYWARD_SESSION_KEY_FILE="$work/session.pem" BIG_KEY="slow-reader-key"
"$KEYWARD_BIN" keys generate --out "$work/session.pem" 2>/dev/null
token=$("$KEYWARD_BIN" sessions mint --config "$work/keyward.toml" --device slow-reader --register --token-only)
"$KEYWARD_BIN" serve --config "$work/keyward.toml" 2> "$work/keyward.log" &
keyward_pid=$!
pids+=($keyward_pid)
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$admin_port/readyz" >/dev/null && break; sleep 0.1; done

python3 bench/slow_reader.py "$keyward_port" /p/big/v1/big "$token" "$keyward_pid" "$upstream_port" "$pause"
