#!/usr/bin/env bash
# Instructions per proxied request, counted by valgrind's callgrind: the same figure whatever else
# the machine runs, so two builds (or two targets) compare without alternating runs. Kernel time
# is not counted, only the proxy process's own instructions (every thread).
#
# For each target (a provider without limits, one session; one with `rate_limit` over 100 devices)
# `keyward serve` runs under callgrind twice, once answering N requests and once 2N, from 4
# keep-alive client threads; the difference over N is the per-request figure, start-up excluded.
#
# Usage: [PROFILES=dir] bench/instructions.sh [BINARY (default: a release build)] [N (default 2000)]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
requests="${2:-2000}"
if [ -n "${1:-}" ]; then
  keyward="$1"
else
  swift build -c release --product keyward >/dev/null
  keyward="$(swift build -c release --show-bin-path)/keyward"
fi
command -v valgrind >/dev/null && command -v nginx >/dev/null || { echo "needs valgrind and nginx" >&2; exit 2; }

bench_work_dir
# Valgrind 3.19 gives up on the DWARF 5 that Swift 6 writes: count a copy without debug sections
# (the instructions are the same).
objcopy --strip-debug "$keyward" "$work/keyward"
keyward="$work/keyward"

upstream_port=$(free_port); port=$(free_port); admin=$(free_port)
start_origin "$work/upstream" "$upstream_port"

write_bench_config "$work" "$upstream_port" "$port" "$admin"
export BENCH_KEY="bench-key" KEYWARD_SESSION_KEY_FILE="$work/session.pem"
"$keyward" keys generate --out "$work/session.pem" >/dev/null 2>&1
"$keyward" migrate --config "$work/keyward.toml" >/dev/null
mint_devices "$keyward" "$work/keyward.toml" 100 "$work/tokens.txt"

# count PATH N: runs serve under callgrind, sends N requests to PATH (sessions taken in turn from
# tokens.txt), stops it and prints the process's total instructions.
count() {
  local path="$1" n="$2"
  local out="$work/callgrind${path//\//_}.$n"
  valgrind --tool=callgrind --callgrind-out-file="$out" "$keyward" serve --config "$work/keyward.toml" 2>"$work/serve.log" &
  local pid=$!
  pids+=("$pid")
  wait_ready "$port" "$work/serve.log" 600
  keepalive_clients "$port" "$path" "$n" "$work/tokens.txt"
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
  awk '/^summary:/ {print $2} /^totals:/ {print $2}' "$out" | head -1
  # PROFILES=dir keeps each run's callgrind file there, for callgrind_annotate.
  if [ -n "${PROFILES:-}" ]; then mkdir -p "$PROFILES" && cp "$out" "$PROFILES/"; fi
}

echo "callgrind instructions per request of $keyward (N = $requests and 2N, 4 keep-alive clients)"
for target in bench benchlimited; do
  one=$(count "/p/$target/v1/models" "$requests")
  two=$(count "/p/$target/v1/models" "$((requests * 2))")
  python3 -c "print('%-13s %10.0f instructions per request' % ('$target', ($two - $one) / $requests))"
done
