#!/usr/bin/env bash
# Runs Keyward's whole test suite: installs the build's Debian packages if missing, then `swift test`,
# then checks the release `keyward` for simulator code.
set -euo pipefail
cd "$(dirname "$0")/.."
# The real-device vectors are read where they lie, beside the repository (README, "Try it").
if [ ! -d ../shared/vectors/appattest ]; then
  echo "scripts/test.sh: $(cd .. && pwd)/shared/vectors is missing: the tests verify the real-device" >&2
  echo "vectors kept beside the repository; check it out next to shared/ (see README.md)." >&2
  exit 1
fi
bash scripts/install-deps.sh
swift build --build-tests
swift test --skip-build
# The production binary links no simulator and no test trust anchor (link graph, and `strings`
# on the release build of `keyward` alone, the binary that ships).
swift build -c release --product keyward
bash scripts/check-release-binary.sh "$(swift build -c release --show-bin-path)/keyward"
