#!/usr/bin/env bash
# System calls per proxied keep-alive request: one `keyward serve` (release build) proxies a small
# JSON answer from a local nginx origin to wrk (keep-alive, CONNECTIONS connections) while
# `strace -c -f` counts every system call of every Keyward thread. Prints the count per request of
# each call and the total; the request count is wrk's (at least 10,000, or the script fails).
#
# Usage: bench/syscalls.sh [seconds (default 5)] [connections (default 4)]
# KEYWARD_BIN=path uses a prebuilt binary instead of building `-c release`.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-5}"
connections="${2:-4}"
for tool in nginx wrk strace; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install nginx-light wrk strace)" >&2; exit 1; }
done
if [ -z "${KEYWARD_BIN:-}" ]; then
  swift build -c release --product keyward >/dev/null
  KEYWARD_BIN="$(swift build -c release --show-bin-path)/keyward"
fi

source bench/common.sh
bench_work_dir
upstream_port=$(free_port); keyward_port=$(free_port); admin_port=$(free_port)
start_origin "$work/upstream" "$upstream_port"
"$KEYWARD_BIN" keys generate --out "$work/session.pem" >/dev/null 2>&1
write_bench_config "$work" "$upstream_port" "$keyward_port" "$admin_port"
export BENCH_KEY="bench-syscalls-key" KEYWARD_SESSION_KEY_FILE="$work/session.pem"
"$KEYWARD_BIN" migrate --config "$work/keyward.toml" >/dev/null
token=$("$KEYWARD_BIN" sessions mint --config "$work/keyward.toml" --device bench-device --platform ios --register --ttl 3600 --token-only)
"$KEYWARD_BIN" serve --config "$work/keyward.toml" 2>"$work/keyward.log" &
keyward_pid=$!
pids+=($keyward_pid)
wait_ready "$keyward_port" "$work/keyward.log"
url="http://127.0.0.1:$keyward_port/p/bench/v1/models"
# Warm the keep-alive pools and heaps, unmeasured.
wrk -t1 -c"$connections" -d1s -H "Authorization: Bearer $token" "$url" >/dev/null

strace -c -f -q -p "$keyward_pid" -o "$work/strace.txt" &
strace_pid=$!
sleep 1  # strace attaches to every thread before the load starts
out=$(wrk -t1 -c"$connections" -d"${seconds}s" -H "Authorization: Bearer $token" "$url")
kill -INT "$strace_pid"; wait "$strace_pid" || true
requests=$(awk '/requests in/ {print $1}' <<<"$out")
non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
[ -z "$non2xx" ] || { echo "$non2xx answers were not 2xx" >&2; exit 1; }
echo "wrk -t1 -c$connections -d${seconds}s under strace -c -f: $requests proxied keep-alive requests"
[ "$requests" -ge 10000 ] || { echo "fewer than 10,000 requests: run longer" >&2; exit 1; }
# strace -c table: % time, seconds, usecs/call, calls, [errors], syscall.
awk -v n="$requests" '
  $1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" {
    calls = $4; errors = (NF == 6 ? $5 : 0)
    printf "%-16s %6.2f per request", $NF, calls / n
    if (errors > 0) printf "  (%.2f of them failed, e.g. EAGAIN)", errors / n
    printf "\n"; total += calls
  }
  END { printf "%-16s %6.2f per request\n", "total", total / n }' "$work/strace.txt" | sort -k2 -rn
