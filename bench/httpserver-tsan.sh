#!/usr/bin/env bash
# ThreadSanitizer stress of HTTPServer's cross-thread paths (worker threads, then an external loop): late answers from other
# threads, streams written from other threads, clients leaving mid-stream, stop()
# with streams open. Compiles Sources/HTTPServer with -sanitize=thread into a
# temporary binary (no package change). Exit status 0 and no "SUMMARY:" = clean.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/module.modulemap" <<MAP
module CShims [system] {
    header "$root/Sources/CShims/include/microhttpd_shims.h"
    export *
}
MAP
cc -O1 -g -fsanitize=thread -c "$root/Sources/CShims/microhttpd_shims.c" -I "$root/Sources/CShims/include" -o "$work/shims.o"
cp "$root/bench/httpserver-tsan-main.swift" "$work/main.swift"
# The lock and field-bytes modules first (HTTPServer imports them), instrumented too.
swiftc -Onone -g -D DEBUG -sanitize=thread -package-name Keyward -module-name KeywardSupport -parse-as-library \
    -emit-library -static -emit-module -emit-module-path "$work/KeywardSupport.swiftmodule" \
    -o "$work/libKeywardSupport.a" "$root"/Sources/KeywardSupport/*.swift
swiftc -Onone -g -D DEBUG -sanitize=thread -package-name Keyward -module-name HTTPFields -parse-as-library \
    -emit-library -static -emit-module -emit-module-path "$work/HTTPFields.swiftmodule" \
    -o "$work/libHTTPFields.a" "$root"/Sources/HTTPFields/*.swift
swiftc -Onone -g -D DEBUG -sanitize=thread -package-name Keyward -module-name Stress -o "$work/stress" \
    -I "$root/Sources/CMicroHTTPD" -I "$work" \
    "$root"/Sources/HTTPServer/*.swift "$work/main.swift" "$work/shims.o" "$work/libKeywardSupport.a" "$work/libHTTPFields.a" -lmicrohttpd
SWIFT_BACKTRACE=enable=no TSAN_OPTIONS=halt_on_error=1 "$work/stress"
