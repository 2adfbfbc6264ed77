#!/usr/bin/env bash
# Checks deploy/compose.yaml and deploy/nginx-tls.conf without a container engine:
#   - compose: PostgreSQL and Keyward have healthchecks, Keyward waits for PostgreSQL's health and
#     nginx for Keyward's, Keyward publishes no host port (so --scale works), its stop grace covers
#     readiness_grace_seconds + drain_seconds, and every secret file it names is declared;
#   - nginx: `nginx -t` accepts the site (a throwaway certificate stands in for deploy/tls/), and
#     it re-resolves Keyward (resolver + a variable in proxy_pass), sets X-Forwarded-For and
#     limits the handshake routes: every handshake route README.md names (its "handshake route
#     (`/v1/…`, …)" lists) is matched by the location that has the handshake limit_req.
set -euo pipefail
cd "$(dirname "$0")/../.."
/usr/bin/python3 - deploy/compose.yaml deploy/keyward.toml <<'PY'
import re, sys, tomllib, yaml
compose = yaml.safe_load(open(sys.argv[1]))
config = tomllib.load(open(sys.argv[2], "rb"))
services = compose["services"]
problems = []
for name in ("postgres", "keyward"):
    if "healthcheck" not in services[name]:
        problems.append(f"{name} has no healthcheck")
for name, needs in (("keyward", "postgres"), ("nginx", "keyward")):
    condition = (services[name].get("depends_on") or {}).get(needs, {})
    if not isinstance(condition, dict) or condition.get("condition") != "service_healthy":
        problems.append(f"{name} does not wait for {needs} to be healthy")
if services["keyward"].get("ports"):
    problems.append("keyward publishes host ports: --scale would clash")
if "readyz" not in " ".join(services["keyward"]["healthcheck"]["test"]):
    problems.append("keyward's healthcheck is not /readyz")
shutdown = config.get("shutdown", {})
needed = shutdown.get("readiness_grace_seconds", 5) + shutdown.get("drain_seconds", 30)
grace = services["keyward"].get("stop_grace_period", "10s")
if int(re.fullmatch(r"(\d+)s", grace).group(1)) <= needed:
    problems.append(f"stop_grace_period {grace} does not cover {needed} s of grace and drain")
if not config.get("listen", {}).get("trusted_proxies"):
    problems.append("deploy/keyward.toml trusts no proxy: every client would be nginx")
declared = set(compose.get("secrets", {}))
for secret in services["keyward"].get("secrets", []):
    if secret not in declared:
        problems.append(f"secret {secret} is not declared")
if problems:
    sys.exit("compose check: FAIL: " + "; ".join(problems))
print("ok   compose: healthchecks, depends_on healthy, no host port, stop grace, trusted proxies")
PY
site=deploy/nginx-tls.conf
for needle in 'resolver 127.0.0.11' 'proxy_pass $keyward' 'proxy_set_header X-Forwarded-For' 'limit_req  zone=keyward_handshake' 'limit_conn keyward_clients'; do
  grep -qF "$needle" "$site" || { echo "nginx check: FAIL: $site lacks '$needle'" >&2; exit 1; }
done
/usr/bin/python3 - README.md "$site" <<'PY'
import re, sys
readme = " ".join(open(sys.argv[1]).read().split())
site = open(sys.argv[2]).read()
routes = set()
for listed in re.findall(r"handshake routes? \(([^)]*)\)", readme):
    routes.update(re.findall(r"`(/v1/[^`]*)`", listed))
if not routes:
    sys.exit("nginx check: FAIL: README.md names no handshake routes (\"handshake route (`/v1/…`, …)\")")
# Each regex location with its body (nginx's locations here hold no nested blocks).
locations = re.findall(r"location\s+~\*?\s+(\S+)\s*\{([^}]*)\}", site)
limited = [pattern for pattern, body in locations if "zone=keyward_handshake" in body]
if not limited:
    sys.exit(f"nginx check: FAIL: {sys.argv[2]} has no regex location with limit_req zone=keyward_handshake")
problems = []
for route in sorted(routes):
    # /v1/attest/* stands for each platform's route; nginx takes the first regex location that matches.
    for path in [route.replace("*", platform) for platform in ("ios", "android")] if "*" in route else [route]:
        first = next((pattern for pattern, _ in locations if re.search(pattern, path)), None)
        if first is None or first not in limited:
            problems.append(f"{path} is not in the handshake-limited location")
if problems:
    sys.exit("nginx check: FAIL: " + "; ".join(problems))
print("ok   nginx handshake limit covers README's handshake routes: " + ", ".join(sorted(routes)))
PY
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/tls"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/tls/privkey.pem" -out "$work/tls/fullchain.pem" -days 1 -subj /CN=check 2>/dev/null
sed "s#/etc/nginx/tls#$work/tls#" "$site" > "$work/site.conf"
printf 'pid %s/nginx.pid;\nerror_log %s/error.log;\nevents {}\nhttp {\n  access_log off;\n  include %s/site.conf;\n}\n' "$work" "$work" "$work" > "$work/nginx.conf"
nginx -t -q -c "$work/nginx.conf" || { echo "nginx check: FAIL: nginx -t" >&2; exit 1; }
echo "ok   nginx -t: $site (re-resolving upstream, X-Forwarded-For, handshake limits)"
