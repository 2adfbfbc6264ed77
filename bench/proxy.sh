#!/usr/bin/env bash
# Proxy throughput, CPU and added latency, measured in one run with the same wrk settings:
#   1. the local upstream directly (nginx answering a small JSON body),
#   2. nginx proxy_pass with keep-alive to that upstream, injecting an Authorization header,
#   3. Keyward (`keyward serve`, release build) with a valid session, injecting the key;
#   4. the same Keyward on a provider with `rate_limit` (per minute and per day, high enough
#      never to refuse) over 1,000 devices, one session each, rotated per request by
#      bench/devices.lua.
# Each target gets two unmeasured seconds of the same load first. Prints req/s, p50 and p99 for
# each, and for the three proxies their own CPU per request: user + system time from
# /proc/PID/stat over the measured seconds (Keyward's `serve`; the nginx proxy's worker
# processes, not the origin's), divided by the requests wrk completed. Then the latency a proxy
# adds over one keep-alive connection: wrk -t1 -c1 runs of 1 s, the four targets in turn, five
# times (so the machine's drift falls on all alike); each target's p50 is the median of its five,
# and a proxy's added latency is its p50 minus the direct upstream's. Each round ends with its ratios: keyward/nginx and keyward-limited/nginx
# req/s, keyward/nginx CPU per request, and keyward/nginx added latency (p50, one connection).
# With RUNS > 1 the rounds repeat on the same set-up and the median of each ratio is printed last.
#
# Usage: bench/proxy.sh [duration-seconds (default 10)] [connections (default 64)] [runs (default 1)]
# KEYWARD_BIN=path uses a prebuilt binary instead of building `-c release`.
# Everything listens on 127.0.0.1 and stops when the script ends.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
duration="${1:-10}"
connections="${2:-64}"
runs="${3:-1}"
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
write_proxy_nginx "$work/proxy" "$proxy_port" "$upstream_port" "$bench_key" "$threads"
nginx -p "$work/proxy" -c "$work/proxy/nginx.conf"

# 3. Keyward: a real `serve` with its own store, session key and a bench provider.
"$keyward" keys generate --out "$work/session.pem" >/dev/null 2>&1
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

cpu_ticks() { local n=0 pid; for pid in "$@"; do n=$((n + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo "$n"; }
ticks_per_second=$(getconf CLK_TCK)
keyward_pid=${pids[-1]}
# nginx proxy_pass's workers (the master only forks and waits).
nginx_workers=($(pgrep -P "$(cat "$work/proxy/nginx.pid")"))
[ ${#nginx_workers[@]} -ge 1 ] || { echo "no nginx proxy workers found" >&2; exit 1; }

# wrk_p50 OUT: the p50 of wrk --latency output OUT, in microseconds.
wrk_p50() {
  awk '$1=="50%" {v=$2; u=v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
    f = (u=="us") ? 1 : (u=="ms") ? 1000 : (u=="s") ? 1000000 : -1; if (f < 0) exit 1; printf "%.1f", v * f}' <<<"$1"
}

# wrk_args name → extra wrk arguments and the url of target NAME, in $extra and $url.
target_args() {
  extra=()
  case "$1" in
    upstream) url="http://127.0.0.1:$upstream_port/v1/models" ;;
    nginx) url="http://127.0.0.1:$proxy_port/p/bench/v1/models" ;;
    keyward) url="http://127.0.0.1:$keyward_port/p/bench/v1/models"; extra=(-H "Authorization: Bearer $token") ;;
    limited) url="http://127.0.0.1:$keyward_port"; extra=(-s bench/devices.lua) ;;
  esac
}

export KEYWARD_TOKENS="$work/tokens.txt" KEYWARD_PATH=/p/benchlimited/v1/models
declare -A label=([upstream]="upstream direct (nginx return 200)" [nginx]="nginx proxy_pass + key header"
  [keyward]="keyward (session, key injected)" [limited]="keyward, rate-limited, 1,000 devices")
run() {  # target: throughput, p50/p99 and (for a proxy) CPU per request, into rps_TARGET, cpu_TARGET
  local target="$1" out before after requests rps p50 p99 errors cpu="" processes=()
  target_args "$target"
  case "$target" in nginx) processes=("${nginx_workers[@]}") ;; keyward|limited) processes=("$keyward_pid") ;; esac
  # Two unmeasured seconds first, the same for every target: keep-alive pools, caches and heaps
  # fill up before the figure is taken.
  wrk -t"$threads" -c"$connections" -d2s ${extra[@]+"${extra[@]}"} "$url" >/dev/null
  [ ${#processes[@]} -gt 0 ] && before=$(cpu_ticks "${processes[@]}")
  out=$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency ${extra[@]+"${extra[@]}"} "$url")
  [ ${#processes[@]} -gt 0 ] && after=$(cpu_ticks "${processes[@]}")
  requests=$(awk '/requests in/ {print $1}' <<<"$out")
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  errors=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
  if [ ${#processes[@]} -gt 0 ]; then
    cpu=$(python3 -c "print('%.1f' % (($after - $before) / $ticks_per_second * 1e6 / $requests))")
    eval "cpu_$target=$cpu"
  fi
  printf '%-38s %10s req/s   p50 %9s   p99 %9s%s%s\n' "${label[$target]}" "$rps" "$p50" "$p99" \
    "${cpu:+   $cpu µs CPU per request}" "${errors:+   non-2xx $errors}"
  eval "rps_$target=$rps"
}
latency_runs=5
latency() {  # the four targets' p50 in µs over one keep-alive connection, into p50_TARGET
  local target out pass
  declare -A samples=()
  for target in upstream nginx keyward limited; do
    target_args "$target"
    wrk -t1 -c1 -d1s ${extra[@]+"${extra[@]}"} "$url" >/dev/null
  done
  for pass in $(seq 1 "$latency_runs"); do
    for target in upstream nginx keyward limited; do
      target_args "$target"
      out=$(wrk -t1 -c1 -d1s --latency ${extra[@]+"${extra[@]}"} "$url")
      samples[$target]+="$(wrk_p50 "$out") "
    done
  done
  for target in upstream nginx keyward limited; do
    eval "p50_$target=$(python3 -c 'import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))' ${samples[$target]})"
  done
}

ratios=()  # one line per round: the round's five ratios
for round in $(seq 1 "$runs"); do
  echo "round $round of $runs: wrk -t$threads -c$connections -d${duration}s, all on 127.0.0.1 ($(nproc) cores)"
  for target in upstream nginx keyward limited; do run "$target"; done
  latency
  line=$(python3 - "$rps_keyward" "$rps_nginx" "$rps_limited" "$cpu_keyward" "$cpu_nginx" "$cpu_limited" \
    "$p50_upstream" "$p50_nginx" "$p50_keyward" "$p50_limited" <<'PY'
import sys
rk, rn, rl, ck, cn, cl, pu, pn, pk, pl = map(float, sys.argv[1:])
print("%.2f %.2f %.2f %.2f %.2f %.1f %.1f %.1f %.1f %.1f" % (
    rk / rn, rl / rk, rl / rn, ck / cn, (pk - pu) / (pn - pu), pu, pn - pu, pk - pu, pl - pu, cl / cn))
PY
)
  read -r r_kn r_lk r_ln r_cpu r_lat p_u a_n a_k a_l r_cpul <<<"$line"
  echo "wrk -t1 -c1, median p50 of $latency_runs runs of 1 s: upstream direct ${p_u} µs; added by nginx ${a_n} µs, by keyward ${a_k} µs, by keyward rate-limited ${a_l} µs"
  echo "keyward/nginx req/s ratio: $r_kn"
  echo "keyward-limited/keyward req/s ratio: $r_lk"
  echo "keyward/nginx CPU per request ratio: $r_cpu   (keyward-limited/nginx: $r_cpul)"
  echo "keyward/nginx added latency p50 ratio (one connection): $r_lat"
  echo "keyward-limited/nginx req/s ratio: $r_ln"
  ratios+=("$r_kn $r_lk $r_ln $r_cpu $r_lat")
done
if [ "$runs" -gt 1 ]; then
  printf '%s\n' "${ratios[@]}" | python3 -c '
import statistics, sys
rows = [list(map(float, line.split())) for line in sys.stdin if line.strip()]
names = ["keyward/nginx req/s", "keyward-limited/keyward req/s", "keyward-limited/nginx req/s",
         "keyward/nginx CPU per request", "keyward/nginx added latency p50"]
for i, name in enumerate(names):
    column = [row[i] for row in rows]
    print("median of %d rounds, %s ratio: %.2f   (%s)" % (len(rows), name, statistics.median(column),
          ", ".join("%.2f" % v for v in column)))'
fi
