#!/usr/bin/env bash
# Installs the Debian packages Keyward builds, tests and benchmarks with.
# Idempotent: does nothing when everything is already there.
set -euo pipefail
packages=(
  pkg-config libssl-dev libcurl4-openssl-dev libsqlite3-dev libpq-dev
  libtomlplusplus-dev
  postgresql pgbouncer curl openssl
  python3-seccomp python3-yaml systemd nginx
  python3 python3-venv
  openjdk-17-jdk-headless junit5
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
