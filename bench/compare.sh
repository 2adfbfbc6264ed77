#!/usr/bin/env bash
# Two Keyward builds side by side, alternating in one run so the machine's load falls on both
# alike, on bench/proxy.sh's two Keyward targets: a provider without limits (one session) and one
# with `rate_limit` over 1,000 devices (bench/devices.lua). For each: req/s and the proxy's own
# CPU per request (user + system time from /proc/PID/stat over the measured seconds, divided by
# the requests wrk completed), then B/A ratios of the sums.
#
# Usage: bench/compare.sh BINARY_A BINARY_B [rounds (default 3)] [seconds (default 8)] [connections (default 64)]
# Each binary runs `keyward serve` with its own store and session key in front of one local nginx
# upstream; both stop when the script ends. Everything listens on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
[ $# -ge 2 ] || { echo "usage: bench/compare.sh BINARY_A BINARY_B [rounds] [seconds] [connections]" >&2; exit 2; }
binaries=("$1" "$2")
rounds="${3:-3}"
duration="${4:-8}"
connections="${5:-64}"
threads=2
for binary in "${binaries[@]}"; do [ -x "$binary" ] || { echo "not an executable: $binary" >&2; exit 2; }; done
command -v nginx >/dev/null && command -v wrk >/dev/null || { echo "needs nginx and wrk (bench/proxy.sh installs them)" >&2; exit 2; }

bench_work_dir

upstream_port=$(free_port)
start_origin "$work/upstream" "$upstream_port"

export BENCH_KEY="bench-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
ports=(); tokens=(); serve_pids=()
for i in 0 1; do
  dir="$work/k$i"; mkdir -p "$dir"
  port=$(free_port); admin=$(free_port)
  write_bench_config "$dir" "$upstream_port" "$port" "$admin"
  "${binaries[$i]}" keys generate --out "$dir/session.pem" >/dev/null
  export KEYWARD_SESSION_KEY_FILE="$dir/session.pem"
  "${binaries[$i]}" migrate --config "$dir/keyward.toml" >/dev/null
  tokens[$i]=$("${binaries[$i]}" sessions mint --config "$dir/keyward.toml" --device bench-device --platform ios --register --ttl 3600 --token-only)
  mint_devices "${binaries[$i]}" "$dir/keyward.toml" 1000 "$dir/tokens.txt"
  "${binaries[$i]}" serve --config "$dir/keyward.toml" 2>"$dir/keyward.log" &
  serve_pids[$i]=$!; pids+=($!)
  ports[$i]=$port
  wait_ready "$port" "$dir/keyward.log"
  status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${tokens[$i]}" "http://127.0.0.1:$port/p/bench/v1/models")
  [ "$status" = 200 ] || { echo "binary ${binaries[$i]} did not proxy (status $status)"; exit 1; }
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Context switches of every thread of the process, voluntary and not.
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {n += $2} END {print n}'; }
ticks_per_second=$(getconf CLK_TCK)
echo "wrk -t$threads -c$connections -d${duration}s, $rounds alternating rounds, $(nproc) cores"
echo "A = ${binaries[0]}"
echo "B = ${binaries[1]}"
declare -A sum_rps=() sum_cpu=()
measure() {  # binary-index target-name
  local i="$1" target="$2" extra=() url
  if [ "$target" = limited ]; then
    url="http://127.0.0.1:${ports[$i]}"
    extra=(-s bench/devices.lua)
    export KEYWARD_TOKENS="$work/k$i/tokens.txt" KEYWARD_PATH=/p/benchlimited/v1/models
  else
    url="http://127.0.0.1:${ports[$i]}/p/bench/v1/models"
    extra=(-H "Authorization: Bearer ${tokens[$i]}")
  fi
  wrk -t"$threads" -c"$connections" -d2s "${extra[@]}" "$url" >/dev/null
  local before after out requests rps errors cpu name
  before=$(cpu_ticks "${serve_pids[$i]}"); switched=$(switches "${serve_pids[$i]}")
  out=$(wrk -t"$threads" -c"$connections" -d"${duration}s" "${extra[@]}" "$url")
  after=$(cpu_ticks "${serve_pids[$i]}"); switched=$(( $(switches "${serve_pids[$i]}") - switched ))
  requests=$(awk '/requests in/ {print $1}' <<<"$out")
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  errors=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
  cpu=$(python3 -c "print('%.1f' % (($after - $before) / $ticks_per_second * 1e6 / $requests))")
  name=$([ "$i" = 0 ] && echo A || echo B)
  printf 'round %d %s %-9s %12s req/s   %6s µs CPU   %5s context switches per request%s\n' "$round" "$name" "$target" "$rps" "$cpu" \
    "$(python3 -c "print('%.2f' % ($switched / $requests))")" "${errors:+   non-2xx $errors}"
  sum_rps[$i$target]=$(python3 -c "print(${sum_rps[$i$target]:-0} + $rps)")
  sum_cpu[$i$target]=$(python3 -c "print(${sum_cpu[$i$target]:-0} + $cpu)")
}
for round in $(seq 1 "$rounds"); do
  for target in unlimited limited; do
    measure 0 "$target"
    measure 1 "$target"
  done
done
for target in unlimited limited; do
  python3 -c "print('%-9s B/A req/s ratio: %.2f   B/A CPU per request ratio: %.2f' % ('$target', ${sum_rps[1$target]} / ${sum_rps[0$target]}, ${sum_cpu[1$target]} / ${sum_cpu[0$target]}))"
done
for i in 0 1; do
  python3 -c "print('%s limited/unlimited req/s ratio: %.2f' % ('AB'[$i], ${sum_rps[${i}limited]} / ${sum_rps[${i}unlimited]}))"
done
