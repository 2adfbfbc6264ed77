#!/usr/bin/env bash
# Instructions per proxied request of nginx proxy_pass, counted by valgrind's callgrind the way
# bench/instructions.sh counts Keyward's, so the two figures compare: the reference proxy of
# bench/proxy.sh (same configuration: keep-alive upstream pool, Authorization set, Cookie cleared;
# write_proxy_nginx in bench/common.sh) as one process (`master_process off; daemon off;`, one
# worker) under callgrind, in front of the same origin (start_origin), driven by the same 4
# keep-alive client threads (keepalive_clients), each request carrying an Authorization header as
# Keyward's clients do (nginx replaces it). Run once answering N and once 2N; the difference over
# N is the per-request figure, start-up excluded. Kernel time is not counted.
#
# Usage: [PROFILES=dir] bench/nginx-instructions.sh [N (default 2000)]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
requests="${1:-2000}"
command -v valgrind >/dev/null && command -v nginx >/dev/null || { echo "needs valgrind and nginx" >&2; exit 2; }

bench_work_dir
upstream_port=$(free_port); port=$(free_port)
start_origin "$work/upstream" "$upstream_port"
# Client tokens of a session token's size (nginx reads and drops them).
for i in $(seq 1 100); do echo "client-$(head -c 96 /dev/urandom | od -An -tx1 | tr -d ' \n')"; done >"$work/tokens.txt"

# count N: nginx proxy_pass under callgrind answers one readiness request and N requests, stops,
# and its total instructions are printed.
count() {
  local n="$1" dir="$work/proxy$1"
  local out="$dir/callgrind.$n"
  write_proxy_nginx "$dir" "$port" "$upstream_port" "bench-key" 1 "master_process off; daemon off;"
  valgrind --tool=callgrind --callgrind-out-file="$out" nginx -p "$dir" -c "$dir/nginx.conf" 2>"$dir/valgrind.log" &
  local pid=$!
  pids+=("$pid")
  # Ready when it proxies (refused attempts never reach nginx: one request per run, both runs).
  local deadline=$((SECONDS + 60))
  until curl -fs -o /dev/null "http://127.0.0.1:$port/p/bench/v1/models"; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "nginx did not start under valgrind:" >&2; tail -5 "$dir/valgrind.log" >&2; exit 1; }
    sleep 0.2
  done
  keepalive_clients "$port" /p/bench/v1/models "$n" "$work/tokens.txt"
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
  awk '/^summary:/ {print $2} /^totals:/ {print $2}' "$out" | head -1
  if [ -n "${PROFILES:-}" ]; then mkdir -p "$PROFILES" && cp "$out" "$PROFILES/"; fi
}

echo "callgrind instructions per request of nginx proxy_pass ($(nginx -v 2>&1 | sed 's/.*: //'), N = $requests and 2N, 4 keep-alive clients)"
one=$(count "$requests")
two=$(count "$((requests * 2))")
python3 -c "print('%-13s %10.0f instructions per request' % ('nginx', ($two - $one) / $requests))"
