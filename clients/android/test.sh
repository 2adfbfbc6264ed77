#!/usr/bin/env bash
# Builds the Android client library and runs its JUnit 5 tests (Debian's junit5 jars) against a
# real Keyward: `keyward-demo android-fixture` (a whole Keyward with a pinned clock) and
# `keyward serve` against the fakes of `keyward-demo android-fixture --fakes-only`; the binaries
# come from $KEYWARD_DEMO and $KEYWARD_BINARY or the debug build (`swift build` first). Before
# that it checks that README's Android code compiles
# (check-readme.sh). Prints the console launcher's tree, then one line
# `android client: N passed, N failed` and exits non-zero when a test failed or none ran.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
bin=$(cd "$root" && swift build --show-bin-path)
demo=${KEYWARD_DEMO:-$bin/keyward-demo}
keyward=${KEYWARD_BINARY:-$bin/keyward}
for binary in "$demo" "$keyward"; do
  [ -x "$binary" ] || { echo "clients/android/test.sh: $binary not found (swift build)" >&2; exit 1; }
done
launcher=/usr/share/java/junit-platform-console-standalone.jar
[ -f "$launcher" ] || { echo "clients/android/test.sh: $launcher missing (apt-get install junit5)" >&2; exit 1; }
bash build.sh
bash check-readme.sh
rm -rf build/test-classes
mkdir -p build/test-classes
javac --release 17 -Xlint:all -Werror -encoding UTF-8 -cp "build/keyward-client.jar:$launcher" -d build/test-classes \
  $(find src/test/java -name '*.java' | sort)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
java -Dkeyward.demo="$demo" -Dkeyward.binary="$keyward" -Dkeyward.vectors="$root/Tests/Fixtures/client-data-vectors.json" -Dkeyward.readme="$root/README.md" \
  -jar "$launcher" --disable-banner --disable-ansi-colors --details=tree \
  --class-path "build/test-classes:build/keyward-client.jar" --select-package dev.keyward.client 2>&1 | tee "$log" || status=$?
passed=$(sed -nE 's/^\[ *([0-9]+) tests successful *\]$/\1/p' "$log" | tail -1)
failed=$(sed -nE 's/^\[ *([0-9]+) tests failed *\]$/\1/p' "$log" | tail -1)
passed=${passed:-0}
failed=${failed:-0}
echo "android client: $passed passed, $failed failed"
if [ "$passed" -eq 0 ] || [ "$failed" -ne 0 ]; then [ "$status" -ne 0 ] || status=1; fi
exit "$status"
