#!/usr/bin/env bash
# Builds the Keyward Android client library: javac (Java 17, no dependencies) into
# build/keyward-client.jar, then checks with jdeps that it needs the java.base module alone. No
# Gradle, no Android SDK: the library uses only java.* APIs that Android has had since API 26
# (java.time, java.util.Base64, HttpURLConnection).
set -euo pipefail
cd "$(dirname "$0")"
rm -rf build/classes
mkdir -p build/classes
javac --release 17 -Xlint:all -Werror -encoding UTF-8 -d build/classes $(find src/main/java -name '*.java' | sort)
jar --create --file build/keyward-client.jar -C build/classes .
# What the library may depend on: the JDK's java.base module only (no Android SDK class, no
# third-party jar, nothing an app would have to add).
modules=$(jdeps --multi-release 17 --print-module-deps build/keyward-client.jar)
if [ "$modules" != "java.base" ]; then
  echo "clients/android/build.sh: the library depends on $modules, not java.base alone" >&2
  exit 1
fi
echo "clients/android: built build/keyward-client.jar"
