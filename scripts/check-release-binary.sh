#!/usr/bin/env bash
# Checks that the production `keyward` executable carries no simulator and no test trust anchor:
# 1. the link graph: no target `KeywardCLI` depends on, directly or not, is `DeviceSimulator` or
#    `KeywardDemo` (read from `swift package describe --type json`, so it holds for every build
#    configuration, release included);
# 2. the built binary: `strings` finds none of the simulator's type names in it.
# Usage: scripts/check-release-binary.sh [path/to/keyward]   (default: the debug build's).
# scripts/test.sh passes the release build of the `keyward` product alone (about 90 s from scratch
# on two busy cores).
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:-$(swift build --show-bin-path)/keyward}"
forbidden_targets="DeviceSimulator KeywardDemo"
forbidden_strings="TestTrustAnchor SimulatedAppleDevice FakeGooglePlayIntegrity"

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
