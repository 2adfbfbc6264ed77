#!/usr/bin/env bash
# Checks deploy/keyward.service on this machine, without running systemd as PID 1:
#   1. `systemd-analyze verify` accepts the unit (its binary path pointed at the built keyward);
#   2. `systemd-analyze security --offline` keeps the exposure score at or below 1.4 (the unit's score when it was written);
#   3. `check-config` and `serve` run under the unit's own SystemCallFilter=/SystemCallErrorNumber=
#      (loaded with libseccomp by seccomp-exec.py): serve answers /readyz and a challenge, reloads
#      on SIGHUP, and exits 0 on SIGTERM. `serve` is also run with every call outside the filter
#      killing the process (as systemd does when SystemCallErrorNumber= is missing) but for
#      setpriority(2), which libdispatch calls at start and survives being refused: this shows
#      serve makes no other call the unit forbids on these paths.
# usage: deploy/check/systemd-unit.sh [KEYWARD_BINARY]   (default .build/debug/keyward)
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=$(realpath "${1:-.build/debug/keyward}")
unit=deploy/keyward.service
work=$(mktemp -d)
chmod 0755 "$work"
loader=(/usr/bin/python3 "$PWD/deploy/check/seccomp-exec.py" "$unit")
# DynamicUser=yes runs the service as an unprivileged user: so does this check when it runs as
# root (SQLite, for one, calls fchown(2) — outside the filter — only as root).
if [ "$(id -u)" -eq 0 ]; then
  loader=(setpriv --reuid=65534 --regid=65534 --clear-groups "${loader[@]}")
fi
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "systemd-unit check: FAIL: $*" >&2; [ -f "$work/serve.log" ] && tail -20 "$work/serve.log" >&2; exit 1; }

# 1. verify: systemd insists the ExecStart= binary exists, so a copy names the built one.
sed "s#/usr/local/bin/keyward#$binary#g" "$unit" > "$work/keyward.service"
out=$(systemd-analyze verify "$work/keyward.service" 2>&1) || fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify printed: $out"
echo "ok   systemd-analyze verify"

# 2. hardening score.
score=$(systemd-analyze security --offline=true "$work/keyward.service" 2>/dev/null \
  | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$score" ] || fail "no exposure score from systemd-analyze security"
awk -v s="$score" 'BEGIN { exit !(s <= 1.4) }' || fail "exposure $score > 1.4"
echo "ok   systemd-analyze security: exposure $score"

# 3. serve under the filter, with the secrets as credential files (what LoadCredential= gives).
mkdir -p "$work/credentials"
"$binary" keys generate --out "$work/credentials/KEYWARD_SESSION_KEY" 2>/dev/null
echo > "$work/credentials/KEYWARD_SESSION_KEYS_RETIRED"   # the SetCredential= default: a lone newline
echo "check-key" > "$work/credentials/CHECK_API_KEY"
cat > "$work/providers.toml" <<'TOML'
[check]
base_url = "http://127.0.0.1:9"
allow_http_loopback = true
secret = "CHECK_API_KEY"
auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
allow = [{ method = "POST", path = "/v1/echo" }]
TOML
cat > "$work/keyward.toml" <<TOML
providers_file = "providers.toml"
[listen]
proxy = "127.0.0.1:0"
admin = "127.0.0.1:0"
[store]
url = "sqlite://$work/keyward.sqlite"
[apple]
team_id = "ABCDE12345"
bundle_ids = ["com.example.check"]
environment = "development"
TOML
[ "$(id -u)" -ne 0 ] || chown -R 65534:65534 "$work"
export CREDENTIALS_DIRECTORY="$work/credentials"
"${loader[@]}" -- "$binary" check-config --config "$work/keyward.toml" > "$work/check-config.log" 2>&1 \
  || { cat "$work/check-config.log" >&2; fail "check-config under the filter"; }
echo "ok   check-config under the unit's filter"

# Waits (up to 30 s) for a log line matching $1 in serve.log.
wait_for_log() {
  for _ in $(seq 300); do grep -q "$1" "$work/serve.log" && return 0; sleep 0.1; done
  fail "no log line matching $1"
}

run_serve() {  # $1: extra loader option ("" or --kill)
  : > "$work/serve.log"
  "${loader[@]}" $1 -- "$binary" serve --config "$work/keyward.toml" 2> "$work/serve.log" &
  local pid=$!
  pids+=("$pid")
  wait_for_log '"started"'
  local admin proxy
  admin=$(sed -n 's/.*admin on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
  proxy=$(sed -n 's/.*proxy on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$admin/readyz")" = 200 ] || fail "/readyz not 200"
  [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$proxy/v1/challenge")" = 200 ] || fail "challenge not 200"
  kill -HUP "$pid"
  wait_for_log 'providers_reloaded'
  kill -TERM "$pid"
  local status=0
  wait "$pid" || status=$?
  [ "$status" -eq 0 ] || fail "serve exited $status under the filter (${1:-the unit errno})"
  grep -q '"stopped"' "$work/serve.log" || fail "no stopped line"
}

run_serve ""
echo "ok   serve under the unit's filter: ready, challenge, SIGHUP reload, SIGTERM exit 0"
run_serve "--kill --errno-for setpriority"
echo "ok   serve with every call outside the filter but setpriority killing the process: same"
