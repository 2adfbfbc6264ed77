#!/usr/bin/env bash
# Slowloris: N connections (default 1,000) each trickling one byte of a request head a second into
# one `keyward serve` (release build). Prints Keyward's RSS before and after 10 s of it (KiB per
# connection), then how long after its first byte each connection was cut (the head timeout runs
# from a head's first byte, 60 s by default).
#
# Usage: bench/slowloris.sh [connections (default 1000)]
# KEYWARD_BIN=path uses a prebuilt binary instead of building `-c release`.
set -euo pipefail
cd "$(dirname "$0")/.."
connections="${1:-1000}"
if [ -z "${KEYWARD_BIN:-}" ]; then
  swift build -c release --product keyward >/dev/null
  KEYWARD_BIN="$(swift build -c release --show-bin-path)/keyward"
fi
ulimit -n "$(ulimit -Hn)"
source bench/common.sh
bench_work_dir
upstream_port=$(free_port); keyward_port=$(free_port); admin_port=$(free_port)
"$KEYWARD_BIN" keys generate --out "$work/session.pem" >/dev/null 2>&1
write_bench_config "$work" "$upstream_port" "$keyward_port" "$admin_port"
export BENCH_KEY="bench-slowloris-key" KEYWARD_SESSION_KEY_FILE="$work/session.pem"
"$KEYWARD_BIN" serve --config "$work/keyward.toml" 2>"$work/keyward.log" &
keyward_pid=$!
pids+=($keyward_pid)
wait_ready "$keyward_port" "$work/keyward.log"
python3 bench/slowloris.py "$keyward_port" "$connections" "$keyward_pid"
