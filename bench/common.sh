# Shared set-up of the proxy benchmarks (sourced by proxy.sh, compare.sh, instructions.sh,
# nginx-instructions.sh, curl-floor.sh and others): a free loopback port, the local origin, the
# reference nginx proxy_pass, the keep-alive client loop, and the bench providers and keyward.toml.

# bench_work_dir: a fresh scratch directory in $work, and on exit every process in $pids killed,
# every nginx started in a folder of $work (its nginx.pid) stopped, and the directory removed.
bench_work_dir() {
  work="$(mktemp -d)"
  pids=()
  trap bench_cleanup EXIT
}
bench_cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pidfile in "$work"/*/nginx.pid; do [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true; done
  sleep 0.3
  rm -rf "$work"
}

# A TCP port free on 127.0.0.1 now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_origin DIR PORT: nginx in DIR on 127.0.0.1:PORT answering every request with a small JSON
# body over keep-alive (its pid in DIR/nginx.pid; stop it with `stop_origin DIR`).
start_origin() {
  local dir="$1" port="$2"
  mkdir -p "$dir/logs"
  cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log error;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$port;
    location / { default_type application/json; return 200 '{"ok":true}'; }
  }
}
CONF
  nginx -p "$dir" -c "$dir/nginx.conf"
}

# write_proxy_nginx DIR PORT ORIGIN_PORT KEY WORKERS [TOP_LINES]: DIR/nginx.conf for the reference
# proxy: nginx proxy_pass on 127.0.0.1:PORT, /p/bench/ to the origin through a keep-alive upstream
# pool, setting `Authorization: Bearer KEY` and clearing Cookie, WORKERS worker processes;
# TOP_LINES (e.g. "master_process off; daemon off;") go at the top. Start it with
# `nginx -p DIR -c DIR/nginx.conf`.
write_proxy_nginx() {
  local dir="$1" port="$2" origin="$3" key="$4" workers="$5" top="${6:-}"
  mkdir -p "$dir/logs"
  cat > "$dir/nginx.conf" <<CONF
$top
worker_processes $workers;
pid $dir/nginx.pid;
error_log $dir/logs/error.log error;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  upstream origin { server 127.0.0.1:$origin; keepalive 128; }
  server {
    listen 127.0.0.1:$port;
    location /p/bench/ {
      proxy_pass http://origin/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "Bearer $key";
      proxy_set_header Cookie "";
    }
  }
}
CONF
}

# keepalive_clients PORT PATH N TOKENS_FILE: N GETs of PATH on 127.0.0.1:PORT from 4 client threads,
# each over one keep-alive connection, request k carrying `Authorization: Bearer` the k-th line of
# TOKENS_FILE (in turn). Fails, naming the statuses, if any answer is not 200.
keepalive_clients() {
  python3 - "$1" "$2" "$3" "$4" <<'PY'
import http.client, sys, threading
port, path, n, tokens_file = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
tokens = [line.strip() for line in open(tokens_file) if line.strip()]
clients = 4
failures = []
def run(index):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for k in range(index, n, clients):
        connection.request("GET", path, headers={"Authorization": "Bearer " + tokens[k % len(tokens)]})
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
}

stop_origin() { [ -f "$1/nginx.pid" ] && kill "$(cat "$1/nginx.pid")" 2>/dev/null || true; }

# write_bench_config DIR ORIGIN_PORT PROXY_PORT ADMIN_PORT: DIR/providers.toml with `bench` (no
# limit) and `benchlimited` (per minute and per day, high enough never to refuse), both to the
# origin with the key from $BENCH_KEY, and DIR/keyward.toml serving them on the two ports with a
# SQLite store in DIR.
write_bench_config() {
  local dir="$1" origin="$2" proxy="$3" admin="$4"
  cat > "$dir/providers.toml" <<CONF
[bench]
base_url = "http://127.0.0.1:$origin"
allow_http_loopback = true
secret = "BENCH_KEY"
auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
allow = [ { method = "GET", path = "/v1/*" } ]

[benchlimited]
base_url = "http://127.0.0.1:$origin"
allow_http_loopback = true
secret = "BENCH_KEY"
auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
allow = [ { method = "GET", path = "/v1/*" } ]
rate_limit = { per_minute = 1000000, per_day = 100000000 }
CONF
  cat > "$dir/keyward.toml" <<CONF
providers_file = "$dir/providers.toml"
[listen]
proxy = "127.0.0.1:$proxy"
admin = "127.0.0.1:$admin"
[store]
url = "sqlite://$dir/keyward.db"
[apple]
team_id = "BENCHTEAM1"
bundle_ids = ["dev.keyward.bench"]
environment = "production"
CONF
}

# mint_devices KEYWARD CONFIG N OUT: N registered iOS devices bench-device-1…N, one session token
# each (an hour), one per line in OUT (two mints at a time).
mint_devices() {
  local keyward="$1" config="$2" count="$3" out="$4"
  seq 1 "$count" | xargs -P 2 -I{} "$keyward" sessions mint --config "$config" --device "bench-device-{}" \
    --platform ios --register --ttl 3600 --token-only >"$out"
  [ "$(grep -c . "$out")" = "$count" ] || { echo "minting the $count device sessions failed" >&2; return 1; }
}

# wait_ready PORT LOG [tries of 0.1 s, default 100]: until /healthz answers on PORT; else prints
# the end of LOG and fails.
wait_ready() {
  local port="$1" log="$2" tries="${3:-100}"
  for _ in $(seq 1 "$tries"); do
    curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  { echo "keyward did not become ready on port $port:"; tail -5 "$log"; } >&2
  return 1
}
