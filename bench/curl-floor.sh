#!/usr/bin/env bash
# The floor of libcurl 7.88's per-request cost next to nginx proxy_pass's whole cost: what the
# cheapest multi_socket driver (bench/curl-floor.c, compiled here with `cc -O2 ... -lcurl`: one
# multi handle, one epoll set, socket and timer callbacks, easy handles reused after
# curl_easy_reset with URL, one Authorization header line, a discarding write callback, HTTP/1.1
# and NOSIGNAL; 4 transfers in flight) costs per keep-alive GET to the bench origin (start_origin):
#   (a) callgrind instructions per request, the program's own and libcurl's (kernel excluded):
#       runs of N and 2N requests, the difference over N (as bench/instructions.sh counts);
#   (b) system calls per request: `strace -c -f` over runs of 10,000 and 20,000 requests, the
#       difference over 10,000, per call name (start-up and the 4 connects fall out);
#   (c) CPU µs per request, in ROUNDS rounds (default 5), each one measuring in turn nginx
#       proxy_pass as bench/proxy.sh does (2 workers, wrk -t2 -c64, 2 s unmeasured then SECONDS,
#       its workers' /proc ticks ÷ requests) and the floor program (1 s unmeasured, then SECONDS,
#       getrusage user + system ÷ requests); prints each round's floor/nginx ratio and the median.
#
# Usage: bench/curl-floor.sh [N (default 2000)] [SECONDS (default 5)] [ROUNDS (default 5)]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
requests="${1:-2000}"
seconds="${2:-5}"
rounds="${3:-5}"
for tool in cc valgrind strace nginx wrk; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install build-essential valgrind strace nginx-light wrk libcurl4-openssl-dev)" >&2; exit 2; }
done

bench_work_dir
floor="$work/curl-floor"
cc -O2 -g -Wall -Wextra -o "$floor" bench/curl-floor.c -lcurl
upstream_port=$(free_port); proxy_port=$(free_port)
start_origin "$work/upstream" "$upstream_port"
url="http://127.0.0.1:$upstream_port/v1/models"
curl -fs -o /dev/null --retry 20 --retry-connrefused --retry-delay 0 "$url"
echo "libcurl floor: $(curl-config --version 2>/dev/null || echo libcurl), 4 transfers in flight, GET $url"

# (a) instructions
count() {
  local n="$1" out="$work/callgrind.$1"
  valgrind --tool=callgrind --callgrind-out-file="$out" "$floor" "$url" "$n" 4 2>"$work/valgrind.log" \
    || { tail -5 "$work/valgrind.log" >&2; exit 1; }
  awk '/^summary:/ {print $2} /^totals:/ {print $2}' "$out" | head -1
}
one=$(count "$requests"); two=$(count "$((requests * 2))")
python3 -c "print('(a) callgrind, N = %d and 2N: %.0f instructions per request (program + libcurl + libc)' % ($requests, ($two - $one) / $requests))"

# (b) system calls
strace -c -f -q -o "$work/strace.1" "$floor" "$url" 10000 4
strace -c -f -q -o "$work/strace.2" "$floor" "$url" 20000 4
echo "(b) strace -c -f, 20,000 requests minus 10,000, per request:"
python3 - "$work/strace.1" "$work/strace.2" <<'PY'
import sys
def table(path):
    calls = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and f[0].replace('.', '').isdigit() and f[-1] != "total":
            calls[f[-1]] = (int(f[3]), int(f[4]) if len(f) == 6 else 0)
    return calls
a, b = table(sys.argv[1]), table(sys.argv[2])
rows = []
for name in set(a) | set(b):
    c = (b.get(name, (0, 0))[0] - a.get(name, (0, 0))[0]) / 10000
    e = (b.get(name, (0, 0))[1] - a.get(name, (0, 0))[1]) / 10000
    if abs(c) >= 0.005: rows.append((c, e, name))
for c, e, name in sorted(rows, reverse=True):
    print("    %-14s %5.2f%s" % (name, c, "  (%.2f failed)" % e if e >= 0.005 else ""))
print("    %-14s %5.2f" % ("total", sum(r[0] for r in rows)))
PY

# (c) CPU per request, nginx proxy_pass and the floor in turn, each round
write_proxy_nginx "$work/proxy" "$proxy_port" "$upstream_port" "bench-key" 2
nginx -p "$work/proxy" -c "$work/proxy/nginx.conf"
curl -fs -o /dev/null --retry 20 --retry-connrefused --retry-delay 0 "http://127.0.0.1:$proxy_port/p/bench/v1/models"
nginx_workers=($(pgrep -P "$(cat "$work/proxy/nginx.pid")"))
[ ${#nginx_workers[@]} -ge 1 ] || { echo "no nginx proxy workers found" >&2; exit 1; }
cpu_ticks() { local n=0 pid; for pid in "$@"; do n=$((n + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo "$n"; }
ticks_per_second=$(getconf CLK_TCK)
ratios=()
echo "(c) CPU per request, $rounds rounds of ${seconds} s each:"
for round in $(seq 1 "$rounds"); do
  wrk -t2 -c64 -d2s "http://127.0.0.1:$proxy_port/p/bench/v1/models" >/dev/null
  before=$(cpu_ticks "${nginx_workers[@]}")
  out=$(wrk -t2 -c64 -d"${seconds}s" "http://127.0.0.1:$proxy_port/p/bench/v1/models")
  after=$(cpu_ticks "${nginx_workers[@]}")
  ! grep -q Non-2xx <<<"$out" || { echo "nginx answered non-2xx" >&2; exit 1; }
  n_requests=$(awk '/requests in/ {print $1}' <<<"$out")
  nginx_cpu=$(python3 -c "print('%.2f' % (($after - $before) / $ticks_per_second * 1e6 / $n_requests))")
  floor_out=$("$floor" "$url" 0 4 "$seconds")
  floor_cpu=$(awk '{print $(NF-4)}' <<<"$floor_out")
  ratio=$(python3 -c "print('%.2f' % ($floor_cpu / $nginx_cpu))")
  ratios+=("$ratio")
  echo "    round $round: nginx proxy_pass $nginx_cpu µs ($n_requests requests); libcurl floor $floor_cpu µs ($floor_out); floor/nginx CPU ratio $ratio"
done
python3 -c 'import statistics, sys; print("median of %d rounds, floor/nginx CPU per request ratio: %.2f   (%s)" % (len(sys.argv) - 1, statistics.median(map(float, sys.argv[1:])), ", ".join(sys.argv[1:])))' "${ratios[@]}"
