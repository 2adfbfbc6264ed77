#!/usr/bin/env bash
# Builds the Keyward Android client library: javac (Java 17, no dependencies) into
# build/keyward-client.jar. No Gradle, no Android SDK: the library uses only java.* APIs that
# Android has had since API 26 (java.time, java.util.Base64, HttpURLConnection).
set -euo pipefail
cd "$(dirname "$0")"
rm -rf build/classes
mkdir -p build/classes
javac --release 17 -Xlint:all -Werror -encoding UTF-8 -d build/classes $(find src/main/java -name '*.java' | sort)
jar --create --file build/keyward-client.jar -C build/classes .
echo "clients/android: built build/keyward-client.jar"
