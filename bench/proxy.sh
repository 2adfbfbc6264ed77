#!/usr/bin/env bash
# Proxy throughput, measured in one run with the same wrk settings:
#   1. the local upstream directly (nginx answering a small JSON body),
#   2. nginx proxy_pass with keep-alive to that upstream, injecting an Authorization header,
#   3. Keyward (`keyward serve`, release build) with a valid session, injecting the key;
#   4. the same Keyward on a provider with `rate_limit` (per minute and per day, high enough
#      never to refuse) over 1,000 devices, one session each, rotated per request by
#      bench/devices.lua.
# Each target gets two unmeasured seconds of the same load first. Prints req/s, p50 and p99 for
# each, then `keyward/nginx req/s ratio: R`, and last `keyward-limited/nginx req/s ratio: R`.
#
# Usage: bench/proxy.sh [duration-seconds (default 10)] [connections (default 64)]
# KEYWARD_BIN=path uses a prebuilt binary instead of building `-c release`.
# Everything listens on 127.0.0.1 and stops when the script ends.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
duration="${1:-10}"
connections="${2:-64}"
threads=2

need=()
command -v nginx >/dev/null || need+=(nginx-light)
command -v wrk >/dev/null || need+=(wrk)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
bash scripts/install-deps.sh
if [ -n "${KEYWARD_BIN:-}" ]; then
  keyward="$KEYWARD_BIN"
else
  swift build -c release --product keyward >/dev/null
  keyward="$(swift build -c release --show-bin-path)/keyward"
fi

bench_work_dir

upstream_port=$(free_port); proxy_port=$(free_port); keyward_port=$(free_port); admin_port=$(free_port)
bench_key="bench-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"

# 1. The upstream: nginx answering every request with a small JSON body over keep-alive.
start_origin "$work/upstream" "$upstream_port"

# 2. The reference proxy: nginx proxy_pass with a keep-alive pool, injecting the key header.
mkdir -p "$work/proxy/logs"
cat > "$work/proxy/nginx.conf" <<CONF
worker_processes $threads;
pid $work/proxy/nginx.pid;
error_log $work/proxy/logs/error.log error;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  upstream origin { server 127.0.0.1:$upstream_port; keepalive 128; }
  server {
    listen 127.0.0.1:$proxy_port;
    location /p/bench/ {
      proxy_pass http://origin/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "Bearer $bench_key";
      proxy_set_header Cookie "";
    }
  }
}
CONF
nginx -p "$work/proxy" -c "$work/proxy/nginx.conf"

# 3. Keyward: a real `serve` with its own store, session key and a bench provider.
"$keyward" keys generate --out "$work/session.pem" >/dev/null
write_bench_config "$work" "$upstream_port" "$keyward_port" "$admin_port"
export BENCH_KEY="$bench_key" KEYWARD_SESSION_KEY_FILE="$work/session.pem"
"$keyward" migrate --config "$work/keyward.toml" >/dev/null
token=$("$keyward" sessions mint --config "$work/keyward.toml" --device bench-device --platform ios --register --ttl 3600 --token-only)
# 1,000 devices for the rate-limited target (two mints at a time: about 12 s).
mint_devices "$keyward" "$work/keyward.toml" 1000 "$work/tokens.txt"
"$keyward" serve --config "$work/keyward.toml" 2>"$work/keyward.log" &
pids+=($!)
wait_ready "$keyward_port" "$work/keyward.log"
check=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "http://127.0.0.1:$keyward_port/p/bench/v1/models")
[ "$check" = "200" ] || { echo "keyward did not proxy (status $check):"; tail -5 "$work/keyward.log"; exit 1; }
check=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(head -1 "$work/tokens.txt")" "http://127.0.0.1:$keyward_port/p/benchlimited/v1/models")
[ "$check" = "200" ] || { echo "keyward did not proxy the limited provider (status $check):"; tail -5 "$work/keyward.log"; exit 1; }

run() {  # name url header variable [wrk script]
  local name="$1" url="$2" header="${3:-}" script="${5:-}"
  local out
  local extra=()
  [ -n "$header" ] && extra+=(-H "$header")
  [ -n "$script" ] && extra+=(-s "$script")
  # Two unmeasured seconds first, the same for every target: keep-alive pools, caches and heaps
  # fill up before the figure is taken.
  wrk -t"$threads" -c"$connections" -d2s ${extra[@]+"${extra[@]}"} "$url" >/dev/null
  out=$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency ${extra[@]+"${extra[@]}"} "$url")
  local rps p50 p99 errors
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  errors=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
  printf '%-34s %12s req/s   p50 %9s   p99 %9s%s\n' "$name" "$rps" "$p50" "$p99" "${errors:+   non-2xx $errors}"
  eval "rps_$4=$rps"
}

echo "wrk -t$threads -c$connections -d${duration}s, all on 127.0.0.1 ($(nproc) cores)"
run "upstream direct (nginx return 200)" "http://127.0.0.1:$upstream_port/v1/models" "" upstream
run "nginx proxy_pass + key header" "http://127.0.0.1:$proxy_port/p/bench/v1/models" "" nginx
run "keyward (session, key injected)" "http://127.0.0.1:$keyward_port/p/bench/v1/models" "Authorization: Bearer $token" keyward
export KEYWARD_TOKENS="$work/tokens.txt" KEYWARD_PATH=/p/benchlimited/v1/models
run "keyward, rate-limited, 1,000 devices" "http://127.0.0.1:$keyward_port" "" limited bench/devices.lua
python3 -c "print('keyward/nginx req/s ratio: %.2f' % ($rps_keyward / $rps_nginx))"
python3 -c "print('keyward-limited/keyward req/s ratio: %.2f' % ($rps_limited / $rps_keyward))"
python3 -c "print('keyward-limited/nginx req/s ratio: %.2f' % ($rps_limited / $rps_nginx))"
