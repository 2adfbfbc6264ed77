#!/usr/bin/env bash
# Checks the production `keyward` executable, built as README says
# (`swift build -c release --product keyward --static-swift-stdlib`):
# 1. the link graph: no target `KeywardCLI` depends on, directly or not, is `DeviceSimulator` or
#    `KeywardDemo` (read from `swift package describe --type json`, so it holds for every build
#    configuration, release included);
# 2. the built binary: `strings` finds none of the simulator's type names in it;
# 3. it runs on a host without the Swift toolchain: `ldd` lists no library from the toolchain's
#    folder, and with that folder hidden (an empty tmpfs mounted over it in a private mount
#    namespace; as another user, inside a user namespace) it prints its usage and generates a
#    session key;
# 4. `ldd` lists no libmicrohttpd: HTTP is served by Keyward's own engine.
# Usage: scripts/check-release-binary.sh [path/to/keyward]   (default: the release build's).
# scripts/test.sh passes the release build of the `keyward` product alone (about 90 s from scratch
# on two busy cores); deploy/check/containerfile.sh passes the one the Containerfile's line built.
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:-$(swift build -c release --show-bin-path)/keyward}"
forbidden_targets="DeviceSimulator KeywardDemo"
forbidden_strings="TestTrustAnchor TestReceiptSigner SimulatedAppleDevice FakeGooglePlayIntegrity AndroidClientFixture"

swift package describe --type json | python3 -c '
import json, sys
forbidden = set(sys.argv[1].split())
targets = {t["name"]: t for t in json.load(sys.stdin)["targets"]}
seen, stack = set(), ["KeywardCLI"]
while stack:
    name = stack.pop()
    if name in seen:
        continue
    seen.add(name)
    stack.extend(targets.get(name, {}).get("target_dependencies", []))
linked = sorted(seen & forbidden)
if linked:
    sys.exit("check-release-binary: keyward links " + ", ".join(linked))
' "$forbidden_targets"

[ -x "$binary" ] || { echo "check-release-binary: $binary is not built" >&2; exit 1; }
found=""
for name in $forbidden_strings; do
  if strings "$binary" | grep -F "$name" >/dev/null; then found="$found $name"; fi
done
if [ -n "$found" ]; then
  echo "check-release-binary: $binary contains$found" >&2
  exit 1
fi
echo "check-release-binary: $binary links no simulator, no test trust anchor"

toolchain=$(dirname "$(dirname "$(dirname "$(realpath "$(command -v swift)")")")")   # …/usr/bin/swift → …
if ldd "$binary" | grep -F "$toolchain/"; then
  echo "check-release-binary: $binary loads libraries from $toolchain (built without --static-swift-stdlib?)" >&2
  exit 1
fi
echo "check-release-binary: ldd lists nothing from $toolchain"
# HTTP is served by Keyward's own engine: no HTTP server library may be linked.
if ldd "$binary" | grep -F libmicrohttpd; then
  echo "check-release-binary: $binary links libmicrohttpd" >&2
  exit 1
fi
echo "check-release-binary: ldd lists no libmicrohttpd"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Root mounts in a private namespace; anyone else gets one through a user namespace.
namespace=(unshare --mount)
[ "$(id -u)" -eq 0 ] || namespace=(unshare --mount --map-root-user)
"${namespace[@]}" sh -c '
  mount -t tmpfs none "$1" && [ -z "$(ls -A "$1")" ] || exit 3
  "$2" --help > /dev/null && "$2" keys generate --out "$3/key" 2> /dev/null && grep -q "BEGIN PRIVATE KEY" "$3/key"
' sh "$toolchain" "$binary" "$out" || {
  echo "check-release-binary: $binary does not run with $toolchain hidden" >&2
  exit 1
}
echo "check-release-binary: runs with $toolchain hidden (--help, keys generate)"
