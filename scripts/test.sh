#!/usr/bin/env bash
# Runs Keyward's whole test suite: installs the build's Debian packages if missing, then `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build --build-tests
swift test --skip-build
