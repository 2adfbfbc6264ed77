#!/usr/bin/env bash
# Installs the Debian packages Keyward needs (if missing), builds the demo, and runs it:
# the whole story on 127.0.0.1 with a simulated iPhone and a local fake provider.
# The demo is its own executable, keyward-demo, so the production `keyward` links no simulator.
# Extra arguments go to the demo (e.g. --keep-running).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build --product keyward        # the operator's binary, for trying it by hand afterwards
swift build --product keyward-demo
exec "$(swift build --show-bin-path)/keyward-demo" "$@"
