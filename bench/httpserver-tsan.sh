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
    header "$root/Sources/CShims/include/server_shims.h"
    header "$root/Sources/CShims/include/curl_shims.h"
    export *
}
MAP
cc -O1 -g -fsanitize=thread -c "$root/Sources/CShims/server_shims.c" -I "$root/Sources/CShims/include" -o "$work/shims.o"
cc -O1 -g -fsanitize=thread -c "$root/Sources/CShims/curl_shims.c" -I "$root/Sources/CShims/include" -o "$work/curl_shims.o"
cp "$root/bench/httpserver-tsan-main.swift" "$work/main.swift"
# The lock and field-bytes modules first (HTTPServer imports them), instrumented too.
swiftc -Onone -g -D DEBUG -sanitize=thread -package-name Keyward -module-name KeywardSupport -parse-as-library \
    -emit-library -static -emit-module -emit-module-path "$work/KeywardSupport.swiftmodule" \
    -o "$work/libKeywardSupport.a" "$root"/Sources/KeywardSupport/*.swift
swiftc -Onone -g -D DEBUG -sanitize=thread -package-name Keyward -module-name HTTPFields -parse-as-library \
    -emit-library -static -emit-module -emit-module-path "$work/HTTPFields.swiftmodule" \
    -o "$work/libHTTPFields.a" "$root"/Sources/HTTPFields/*.swift
# The request codec the engine reads with (it imports HTTPFields).
swiftc -Onone -g -D DEBUG -sanitize=thread -package-name Keyward -module-name HTTP1Codec -parse-as-library -I "$work" \
    -emit-library -static -emit-module -emit-module-path "$work/HTTP1Codec.swiftmodule" \
    -o "$work/libHTTP1Codec.a" "$root"/Sources/HTTP1Codec/*.swift
swiftc -Onone -g -D DEBUG -sanitize=thread -package-name Keyward -module-name Stress -o "$work/stress" \
    -I "$work" \
    "$root"/Sources/HTTPServer/*.swift "$root"/Sources/HTTPServer/Engine/*.swift "$work/main.swift" "$work/shims.o" "$work/curl_shims.o" "$work/libKeywardSupport.a" "$work/libHTTP1Codec.a" "$work/libHTTPFields.a" -lcurl
SWIFT_BACKTRACE=enable=no TSAN_OPTIONS=halt_on_error=1 "$work/stress"
