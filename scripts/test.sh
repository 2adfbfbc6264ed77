#!/usr/bin/env bash
# Runs Keyward's whole test suite: installs the build's Debian packages if missing, then `swift test`,
# then builds the release `keyward` as README says and checks it (no simulator code, no library from
# the Swift toolchain). The real-device vectors the tests verify are part of the repository
# (Tests/Fixtures/vectors), so this runs from any clone. The last line printed is the count taken
# from XCTest's own per-test lines: `N passed, N failed, N skipped`; the script exits non-zero when
# any test failed, the runner itself failed, or the release binary check failed. In between it
# checks that the KeywardClient library depends on no server module, runs the API contract
# (schemathesis against a running Keyward) and the Android client library's tests
# (clients/android/test.sh, which prints `android client: N passed, N failed` before the count);
# any failing fails the script. Those later checks run only when the suite passed, and the line
# before the count says when they did not.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build --build-tests
log=$(mktemp)
trap 'rm -f "$log" "$log.android"' EXIT
status=0
swift test --skip-build 2>&1 | tee "$log" || status=$?
suite_status=$status
# The production binary links no simulator and no test trust anchor, and runs without the toolchain.
if [ "$status" -eq 0 ]; then
  swift build -c release --product keyward --static-swift-stdlib
  bash scripts/check-release-binary.sh "$(swift build -c release --show-bin-path)/keyward" || status=$?
fi
# The SDK apps link depends on no server module; the API answers as docs/openapi.yaml says.
if [ "$status" -eq 0 ]; then
  bash scripts/check-client-deps.sh || status=$?
  bash scripts/api-contract.sh || status=$?
fi
# The Android client library (Java, JUnit 5) against a real Keyward: keyward-demo android-fixture.
# Its own count line comes before XCTest's, which stays the last line.
android_status=0
if [ "$suite_status" -eq 0 ]; then
  KEYWARD_DEMO="$(swift build --show-bin-path)/keyward-demo" bash clients/android/test.sh >"$log.android" 2>&1 || android_status=$?
  grep -E "✘|^android client: " "$log.android" || true
  if [ "$android_status" -ne 0 ]; then
    tail -40 "$log.android"
    status=1
  fi
  rm -f "$log.android"
fi
# XCTest prints one "Test Case '<name>' passed|failed|skipped (<seconds> seconds)" line per test.
passed=$(grep -cE "^Test Case '.*' passed \(" "$log" || true)
failed=$(grep -cE "^Test Case '.*' failed \(" "$log" || true)
skipped=$(grep -cE "^Test Case '.*' skipped \(" "$log" || true)
if [ "$passed" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$status" -eq 0 ]; then
  echo "scripts/test.sh: no XCTest results found in the output" >&2
  status=1
fi
if [ "$suite_status" -ne 0 ]; then
  echo "scripts/test.sh: the suite failed, so the release-binary, client-deps, API-contract and Android client checks did not run" >&2
fi
echo "$passed passed, $failed failed, $skipped skipped"
if [ "$failed" -ne 0 ] && [ "$status" -eq 0 ]; then status=1; fi
exit "$status"
