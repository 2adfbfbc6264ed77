#!/usr/bin/env bash
# Hello-world throughput of HTTPServer (Keyward's own engine + a Swift handler), against
# which the proxy's figures can be read, then one 1 GiB streamed response (speed and
# the server's peak resident memory). Compiles Sources/HTTPServer with -O into a
# temporary binary (no package change), runs it, and measures with wrk and curl:
#   bench/hello.sh [wrk args…]     default: -t2 -c64 -d5s
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
command -v wrk >/dev/null || { sudo apt-get install -y wrk || apt-get install -y wrk; }

cat > "$work/module.modulemap" <<MAP
module CShims [system] {
    header "$root/Sources/CShims/include/server_shims.h"
    header "$root/Sources/CShims/include/curl_shims.h"
    export *
}
MAP
cc -O2 -c "$root/Sources/CShims/server_shims.c" -I "$root/Sources/CShims/include" -o "$work/shims.o"
cc -O2 -c "$root/Sources/CShims/curl_shims.c" -I "$root/Sources/CShims/include" -o "$work/curl_shims.o"
cp "$root/bench/hello-main.swift" "$work/main.swift"   # top-level code lives in main.swift
# The lock and field-bytes modules first (HTTPServer imports them).
swiftc -O -package-name Keyward -module-name KeywardSupport -parse-as-library \
    -emit-library -static -emit-module -emit-module-path "$work/KeywardSupport.swiftmodule" \
    -o "$work/libKeywardSupport.a" "$root"/Sources/KeywardSupport/*.swift
swiftc -O -package-name Keyward -module-name HTTPFields -parse-as-library \
    -emit-library -static -emit-module -emit-module-path "$work/HTTPFields.swiftmodule" \
    -o "$work/libHTTPFields.a" "$root"/Sources/HTTPFields/*.swift
# The request codec the engine reads with (it imports HTTPFields).
swiftc -O -package-name Keyward -module-name HTTP1Codec -parse-as-library -I "$work" \
    -emit-library -static -emit-module -emit-module-path "$work/HTTP1Codec.swiftmodule" \
    -o "$work/libHTTP1Codec.a" "$root"/Sources/HTTP1Codec/*.swift
swiftc -O -package-name Keyward -module-name HelloBench -o "$work/hello" \
    -I "$work" \
    "$root"/Sources/HTTPServer/*.swift "$root"/Sources/HTTPServer/Engine/*.swift "$work/main.swift" "$work/shims.o" "$work/curl_shims.o" "$work/libKeywardSupport.a" "$work/libHTTP1Codec.a" "$work/libHTTPFields.a" -lcurl
port=18089
"$work/hello" "$port" & pid=$!
sleep 0.5
args=("$@"); [ ${#args[@]} -eq 0 ] && args=(-t2 -c64 -d5s)
wrk "${args[@]}" "http://127.0.0.1:$port/"
curl -s -o /dev/null -w "stream: %{size_download} bytes in %{time_total} s (%{speed_download} B/s)\n" \
    "http://127.0.0.1:$port/stream?mb=1024"
grep VmHWM "/proc/$pid/status" | sed 's/^/server peak /'
