#!/usr/bin/env bash
# Capacity: N concurrent server-sent-event streams held for S seconds through one `keyward serve`
# (release build) to a local SSE origin, then the same through nginx `proxy_pass` (proxy_buffering
# off, 2 workers), in one run. Every stream must receive every event. Prints, for each, the
# resident memory before and while all streams are held, RSS per held stream, and the proxy's CPU
# (user + system, % of one core) over a window after every stream is held and before the next
# event is due, so the streams sit idle in it.
#
# Usage: bench/sse-streams.sh [streams (default 10000)] [hold-seconds (default 30)]
# SSE_INTERVAL=seconds between events (default 5). The idle window starts once every stream is held
# and ends 2 s before the first stream's second event is due (at most 10 s); with the default 5 s
# there is none, so for the idle CPU figure run e.g. SSE_INTERVAL=60 bench/sse-streams.sh 9500 60
# (the ramp takes streams / 1000 s or longer on a loaded machine).
# Run by hand (not in CI): it needs about 2 x streams file descriptors in the proxy process
# (client + upstream side), so `ulimit -Hn` must allow that; the script says so and stops if not.
# KEYWARD_BIN=path uses a prebuilt binary instead of building `-c release --static-swift-stdlib`.
set -euo pipefail
cd "$(dirname "$0")/.."
streams="${1:-10000}"
hold="${2:-30}"
interval="${SSE_INTERVAL:-5}"
events=$(( hold / interval + 1 ))   # the first at once, the last at `hold` seconds
ramp=1000                           # new streams a second

command -v nginx >/dev/null || { echo "needs nginx (apt-get install nginx-light)" >&2; exit 1; }
hard=$(ulimit -Hn)
ulimit -n "$hard"
if [ "$hard" != unlimited ] && [ $(( streams * 2 + 512 )) -gt "$hard" ]; then
  echo "sse-streams: $streams streams need about $(( streams * 2 + 512 )) open files in the proxy; the hard limit is $hard." >&2
  echo "Raise it (ulimit -Hn as root, LimitNOFILE=) or run fewer: bench/sse-streams.sh $(( (hard - 512) / 2 ))" >&2
  exit 1
fi
if [ -z "${KEYWARD_BIN:-}" ]; then
  swift build -c release --product keyward --static-swift-stdlib >/dev/null
  KEYWARD_BIN="$(swift build -c release --show-bin-path)/keyward"
fi

source bench/common.sh
bench_work_dir
upstream_port=$(free_port); keyward_port=$(free_port); admin_port=$(free_port); nginx_port=$(free_port)

python3 bench/sse_streams.py upstream "$upstream_port" "$events" "$interval" &
pids+=($!)

# RSS of a process and its children, KiB.
rss_kib() {
  local total=0 pid
  for pid in "$@" $(for p in "$@"; do pgrep -P "$p" || true; done); do
    total=$(( total + $(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0) ))
  done
  echo "$total"
}

# CPU time (user + system) of a process and its children, clock ticks.
cpu_ticks() {
  local total=0 pid
  for pid in "$@" $(for p in "$@"; do pgrep -P "$p" || true; done); do
    total=$(( total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0) ))
  done
  echo "$total"
}

# Runs the client against port $1 (path $2, token $3) while measuring pids $4…; prints the figures.
measure() {
  local port=$1 path=$2 token=$3 label=$4; shift 4
  local before held ready="$work/ready-$label"
  before=$(rss_kib "$@")
  local started; started=$(date +%s)
  python3 bench/sse_streams.py client "$port" "$path" "$token" "$streams" "$events" "$ramp" "$ready" > "$work/client-$label.log" 2>&1 &
  local client=$!
  for _ in $(seq 1200); do [ -f "$ready" ] && break; sleep 0.1; done
  [ -f "$ready" ] || { cat "$work/client-$label.log"; echo "$label: the streams never were all held" >&2; return 1; }
  held=$(rss_kib "$@")
  local idle="no idle window (SSE_INTERVAL too short for the ramp)"
  local idle_window=$(( started + interval - $(date +%s) - 2 ))
  [ "$idle_window" -gt 10 ] && idle_window=10
  if [ "$idle_window" -gt 0 ]; then
    local ticks_before ticks_after hz; hz=$(getconf CLK_TCK)
    ticks_before=$(cpu_ticks "$@"); sleep "$idle_window"; ticks_after=$(cpu_ticks "$@")
    idle=$(printf 'CPU while idle %.2f %% of a core over %d s' \
      "$(echo "($ticks_after - $ticks_before) * 100 / $hz / $idle_window" | bc -l)" "$idle_window")
  fi
  local status=0
  wait "$client" || status=$?
  cat "$work/client-$label.log"
  local count; count=$(cat "$ready")
  printf '%-8s RSS before %7d KiB, %d streams held %7d KiB: %.2f KiB per held stream; %s\n' \
    "$label" "$before" "$count" "$held" "$(echo "($held - $before) / $count" | bc -l)" "$idle"
  return $status
}

# Keyward: one provider to the origin, a session for a registered device.
cat > "$work/providers.toml" <<TOML
[sse]
base_url = "http://127.0.0.1:$upstream_port"
allow_http_loopback = true
secret = "SSE_KEY"
auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
allow = [{ method = "POST", path = "/v1/stream" }]
idle_timeout_ms = $(( (interval + 30) * 1000 ))
TOML
# The connection limit is split evenly among the shards, but SO_REUSEPORT spreads connections by
# a hash, not evenly: with only 100 spare, a shard that drew more than its share stopped accepting
# and the rest waited in its backlog until the first streams ended (a "held after <interval> s"
# ramp, and no idle window). A tenth spare covers the spread.
cat > "$work/keyward.toml" <<TOML
providers_file = "providers.toml"
[listen]
proxy = "127.0.0.1:$keyward_port"
admin = "127.0.0.1:$admin_port"
max_connections = $(( streams + streams / 10 + 100 ))
[store]
url = "sqlite://$work/keyward.db"
[shutdown]
readiness_grace_seconds = 0
drain_seconds = 1
TOML
export KEYWARD_SESSION_KEY_FILE="$work/session.pem" SSE_KEY="sse-bench-key"
"$KEYWARD_BIN" keys generate --out "$work/session.pem" 2>/dev/null
token=$("$KEYWARD_BIN" sessions mint --config "$work/keyward.toml" --device sse-bench --register --token-only)
"$KEYWARD_BIN" serve --config "$work/keyward.toml" 2> "$work/keyward.log" &
keyward_pid=$!
pids+=($keyward_pid)
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$admin_port/readyz" >/dev/null && break; sleep 0.1; done
grep -h '"open_file_limit"' "$work/keyward.log" || true

# nginx: the same origin, unbuffered, two workers.
mkdir -p "$work/nginx/logs"
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 2;
worker_rlimit_nofile $hard;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log error;
events { worker_connections $(( streams + 1000 )); }
http {
  access_log off;
  server {
    listen 127.0.0.1:$nginx_port backlog=4096;
    location /p/sse/ {
      proxy_pass http://127.0.0.1:$upstream_port/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "Bearer sse-bench-key";
      proxy_buffering off;
      proxy_read_timeout $(( interval + 30 ))s;
    }
  }
}
CONF
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf"
for _ in $(seq 50); do [ -f "$work/nginx/nginx.pid" ] && break; sleep 0.1; done
nginx_pid=$(cat "$work/nginx/nginx.pid")

echo "$streams streams, $events events each, $interval s apart (held $hold s), ramp $ramp/s"
failures=0
measure "$keyward_port" /p/sse/v1/stream "$token" keyward "$keyward_pid" || failures=$((failures + 1))
measure "$nginx_port" /p/sse/v1/stream unused nginx "$nginx_pid" || failures=$((failures + 1))
exit "$failures"
