#!/usr/bin/env bash
# Builds the production binary as README says (release, --static-swift-stdlib) and checks that it
# runs on a host without the Swift toolchain: `ldd` lists no library from the toolchain's folder,
# and with that folder hidden (an empty tmpfs mounted over it in a private mount namespace, so
# this needs root or unshare rights) the binary prints its usage and generates a session key.
#   bash scripts/check-release-binary.sh [SCRATCH_PATH]   (default .build; builds, then checks)
#   bash scripts/check-release-binary.sh --binary FILE    (checks a binary built that way; CI's
#                                                         Containerfile check passes its own)
set -euo pipefail
cd "$(dirname "$0")/.."
toolchain=$(dirname "$(dirname "$(dirname "$(realpath "$(command -v swift)")")")")   # …/usr/bin/swift → …
if [ "${1:-}" = --binary ]; then
  binary=$(realpath "$2")
else
  scratch=${1:-.build}
  start=$(date +%s)
  swift build -c release --product keyward --static-swift-stdlib --scratch-path "$scratch"
  binary="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/keyward"
  echo "built $binary in $(( $(date +%s) - start )) s ($(du -h "$binary" | cut -f1))"
fi
fail() { echo "check-release-binary: FAIL: $*" >&2; exit 1; }
if ldd "$binary" | grep -F "$toolchain/"; then fail "the binary loads libraries from $toolchain"; fi
echo "ok   ldd: nothing from $toolchain"
ldd "$binary" | sed 's/^/     /'
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
unshare --mount sh -c '
  mount -t tmpfs none "$1" && [ -z "$(ls -A "$1")" ] || exit 3
  "$2" --help > /dev/null && "$2" keys generate --out "$3/key" 2> /dev/null && grep -q "BEGIN PRIVATE KEY" "$3/key"
' sh "$toolchain" "$binary" "$out" || fail "the binary does not run with $toolchain hidden"
echo "ok   runs with $toolchain hidden: --help, keys generate"
