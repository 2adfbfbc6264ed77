#!/usr/bin/env bash
# What a JSON body rule and metering cost a whole proxied call, counted by valgrind's callgrind
# as bench/instructions.sh counts it (the proxy process's own instructions, every thread): the
# same chat-completions POST (a 244-byte body, a 0.6 KiB JSON answer with `usage` from nginx)
# through two allow rules of one provider, with spend control on, `plain` (cost 1) and
# `metered` (`json` with a model list and the cap added, `meter = "openai"`: the hold, the usage
# read from the relayed answer, and the settle's store write). For each, `serve` under callgrind
# answers N and 2N calls; the difference over N is the per-call figure.
#
# Usage: bench/ai-instructions.sh [BINARY (default: a release build)] [N (default 1000)]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
requests="${2:-1000}"
if [ -n "${1:-}" ]; then
  keyward="$1"
else
  swift build -c release --product keyward >/dev/null
  keyward="$(swift build -c release --show-bin-path)/keyward"
fi
command -v valgrind >/dev/null && command -v nginx >/dev/null || { echo "needs valgrind and nginx" >&2; exit 2; }

bench_work_dir
objcopy --strip-debug "$keyward" "$work/keyward"
keyward="$work/keyward"
upstream_port=$(free_port); port=$(free_port); admin=$(free_port)

answer='{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"'"$(printf 'Paris is the capital of France. %.0s' $(seq 12))"'"},"finish_reason":"stop"}],"usage":{"prompt_tokens":41,"completion_tokens":96,"total_tokens":137}}'
mkdir -p "$work/upstream/logs"
cat > "$work/upstream/nginx.conf" <<CONF
worker_processes 1;
pid $work/upstream/nginx.pid;
error_log $work/upstream/logs/error.log error;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$upstream_port;
    location / { default_type application/json; return 200 '$answer'; }
  }
}
CONF
nginx -p "$work/upstream" -c "$work/upstream/nginx.conf"

write_bench_config "$work" "$upstream_port" "$port" "$admin"
cat > "$work/providers.toml" <<CONF
[ai]
base_url = "http://127.0.0.1:$upstream_port"
allow_http_loopback = true
secret = "BENCH_KEY"
auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
allow = [
  { method = "POST", path = "/plain/v1/chat/completions" },
  { method = "POST", path = "/metered/v1/chat/completions", meter = "openai", credits_per_1k_tokens = { input = 1, output = 4 }, json = { models = ["gpt-4o-mini", "gpt-4.1-mini"], max_tokens = 1024, max_tokens_member = "max_completion_tokens" } },
]
CONF
printf '[budgets]\ninstall_daily_credits = 1000000000\n' >> "$work/keyward.toml"
export BENCH_KEY="bench-key" KEYWARD_SESSION_KEY_FILE="$work/session.pem"
"$keyward" keys generate --out "$work/session.pem" >/dev/null 2>&1
"$keyward" migrate --config "$work/keyward.toml" >/dev/null
mint_devices "$keyward" "$work/keyward.toml" 100 "$work/tokens.txt"

count() {
  local path="$1" n="$2"
  local out="$work/callgrind${path//\//_}.$n"
  valgrind --tool=callgrind --callgrind-out-file="$out" "$keyward" serve --config "$work/keyward.toml" 2>"$work/serve.log" &
  local pid=$!
  pids+=("$pid")
  wait_ready "$port" "$work/serve.log" 600
  python3 - "$port" "$path" "$n" "$work/tokens.txt" <<'PY'
import http.client, sys, threading
port, path, n, tokens_file = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
tokens = [line.strip() for line in open(tokens_file) if line.strip()]
body = (b'{"model":"gpt-4o-mini","temperature":0.7,"messages":['
        b'{"role":"system","content":"You are a helpful assistant that answers in one short paragraph."},'
        b'{"role":"user","content":"What is the capital of France, and why is it famous?"}]}')
clients = 4
failures = []
def run(index):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for k in range(index, n, clients):
        connection.request("POST", path, body=body, headers={"Authorization": "Bearer " + tokens[k % len(tokens)], "Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            failures.append(response.status)
threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
for t in threads: t.start()
for t in threads: t.join()
if failures:
    sys.exit("%d of %d requests failed: %s" % (len(failures), n, sorted(set(failures))))
PY
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
  awk '/^summary:/ {print $2} /^totals:/ {print $2}' "$out" | head -1
}

echo "callgrind instructions per call of $keyward (N = $requests and 2N, 4 keep-alive clients, spend control on)"
for target in plain metered; do
  one=$(count "/p/ai/$target/v1/chat/completions" "$requests")
  two=$(count "/p/ai/$target/v1/chat/completions" "$((requests * 2))")
  python3 -c "print('%-8s %10.0f instructions per call' % ('$target', ($two - $one) / $requests))"
done
