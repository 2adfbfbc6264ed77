#!/usr/bin/env bash
# Builds the libFuzzer targets and runs them; see fuzz/README.md.
# usage: fuzz/run.sh [seconds-per-target (default 600)] [target ...]
#   targets: cbor attestation proxypath session integrity receipt http1 bodyrule
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${1:-600}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(cbor attestation proxypath session integrity receipt http1 bodyrule)
OUT=.build/fuzz
mkdir -p "$OUT"
FLAGS=(-O -sanitize=fuzzer -parse-as-library -g)

# The CBOR module, instrumented.
swiftc "${FLAGS[@]}" -module-name CBOR -emit-library -static -emit-module \
    -emit-module-path "$OUT/CBOR.swiftmodule" -o "$OUT/libCBOR.a" Sources/CBOR/*.swift
# The App Attest decoding layer only (these files need CBOR and nothing else).
swiftc "${FLAGS[@]}" -module-name AppAttest -emit-library -static -emit-module \
    -emit-module-path "$OUT/AppAttest.swiftmodule" -I "$OUT" -o "$OUT/libAppAttestParsing.a" \
    Sources/AppAttest/AppAttestError.swift Sources/AppAttest/AppAttestEnvironment.swift \
    Sources/AppAttest/AuthenticatorData.swift Sources/AppAttest/AttestationObject.swift \
    Sources/AppAttest/AssertionObject.swift Sources/AppAttest/NonceExtension.swift
# The receipt payload reader and the typed fields over it: no CBOR, no crypto.
mkdir -p "$OUT/receipt"
swiftc "${FLAGS[@]}" -module-name AppAttest -emit-library -static -emit-module \
    -emit-module-path "$OUT/receipt/AppAttest.swiftmodule" -o "$OUT/libAppAttestReceipt.a" \
    Sources/AppAttest/AppAttestError.swift Sources/AppAttest/ReceiptPayload.swift Sources/AppAttest/AppAttestReceipt.swift
swiftc "${FLAGS[@]}" -I "$OUT/receipt" fuzz/FuzzReceiptPayload.swift "$OUT/libAppAttestReceipt.a" -o "$OUT/fuzz-receipt"
swiftc "${FLAGS[@]}" -I "$OUT" fuzz/FuzzCBORDecoder.swift "$OUT/libCBOR.a" -o "$OUT/fuzz-cbor"
swiftc "${FLAGS[@]}" -I "$OUT" fuzz/FuzzAttestationParser.swift "$OUT/libAppAttestParsing.a" "$OUT/libCBOR.a" \
    -o "$OUT/fuzz-attestation"

# C modules for swiftc: SwiftPM generates these module maps; here they are written by hand, with
# absolute paths, for the three C targets the new fuzzers reach (COpenSSL has its own map).
ROOT="$PWD"
MAPS="$OUT/modulemaps"
mkdir -p "$MAPS/CShims" "$MAPS/CTOML"
printf 'module CShims {\n    umbrella header "%s/Sources/CShims/include/CShims.h"\n    export *\n}\n' "$ROOT" \
    > "$MAPS/CShims/module.modulemap"
printf 'module CTOML {\n    umbrella header "%s/Sources/CTOML/include/CTOML.h"\n    export *\n}\n' "$ROOT" \
    > "$MAPS/CTOML/module.modulemap"
# -package-name as SwiftPM passes it: KeywardSupport shares `package` declarations (Locked).
CMODS=(-package-name Keyward -I "$MAPS/CShims" -I "$MAPS/CTOML" -I Sources/COpenSSL)
# CTOML (C++ over toml++, defines as in Package.swift) and the OpenSSL shims: plain objects, not
# instrumented — the fuzzers aim at the Swift code. CShims' curl and server shims are not needed.
clang++ -std=c++17 -O1 -fPIC -DTOML_HEADER_ONLY=1 -DTOML_EXCEPTIONS=1 -I Sources/CTOML/include \
    -c Sources/CTOML/toml_to_json.cpp -o "$OUT/ctoml.o"
clang -O1 -fPIC -I Sources/CShims/include -c Sources/CShims/openssl_shims.c -o "$OUT/openssl_shims.o"
# ProviderRegistry, whole, over its two leaf modules: TOMLDecoding (CTOML, to build a Provider from
# providers.toml text) and HTTPFields (the header type and token table).
# KeywardSupport first: TOMLDecoding reads files through it.
swiftc "${FLAGS[@]}" "${CMODS[@]}" -module-name KeywardSupport -emit-library -static -emit-module \
    -emit-module-path "$OUT/KeywardSupport.swiftmodule" -o "$OUT/libKeywardSupport.a" Sources/KeywardSupport/*.swift
swiftc "${FLAGS[@]}" "${CMODS[@]}" -I "$OUT" -module-name TOMLDecoding -emit-library -static -emit-module \
    -emit-module-path "$OUT/TOMLDecoding.swiftmodule" -o "$OUT/libTOMLDecoding.a" Sources/TOMLDecoding/*.swift
swiftc "${FLAGS[@]}" "${CMODS[@]}" -module-name HTTPFields -emit-library -static -emit-module \
    -emit-module-path "$OUT/HTTPFields.swiftmodule" -o "$OUT/libHTTPFields.a" Sources/HTTPFields/*.swift
swiftc "${FLAGS[@]}" "${CMODS[@]}" -I "$OUT" -module-name ProviderRegistry -emit-library -static -emit-module \
    -emit-module-path "$OUT/ProviderRegistry.swiftmodule" -o "$OUT/libProviderRegistry.a" \
    $(find Sources/ProviderRegistry -name '*.swift')
# KeywardCrypto (OpenSSL, over KeywardSupport), then Sessions and PlayIntegrity over it.
# PlayIntegrity is built with -enable-testing so its fuzzer can reach the JWE and JWS stages
# separately (@testable import).
swiftc "${FLAGS[@]}" "${CMODS[@]}" -I "$OUT" -module-name KeywardCrypto -emit-library -static -emit-module \
    -emit-module-path "$OUT/KeywardCrypto.swiftmodule" -o "$OUT/libKeywardCrypto.a" \
    $(find Sources/KeywardCrypto -name '*.swift')
swiftc "${FLAGS[@]}" "${CMODS[@]}" -I "$OUT" -module-name Sessions -emit-library -static -emit-module \
    -emit-module-path "$OUT/Sessions.swiftmodule" -o "$OUT/libSessions.a" Sources/Sessions/*.swift
swiftc "${FLAGS[@]}" "${CMODS[@]}" -I "$OUT" -enable-testing -module-name PlayIntegrity -emit-library -static \
    -emit-module -emit-module-path "$OUT/PlayIntegrity.swiftmodule" -o "$OUT/libPlayIntegrity.a" \
    $(find Sources/PlayIntegrity -name '*.swift')
swiftc "${FLAGS[@]}" "${CMODS[@]}" -I "$OUT" fuzz/FuzzProxyPath.swift "$OUT/libProviderRegistry.a" "$OUT/libTOMLDecoding.a" \
    "$OUT/libHTTPFields.a" "$OUT/libKeywardSupport.a" "$OUT/ctoml.o" \
    -lstdc++ -o "$OUT/fuzz-proxypath"
# JSON body rules and the usage scanners: ProviderRegistry again (StrictJSON is KeywardSupport's).
swiftc "${FLAGS[@]}" "${CMODS[@]}" -I "$OUT" fuzz/FuzzBodyRule.swift "$OUT/libProviderRegistry.a" "$OUT/libTOMLDecoding.a" \
    "$OUT/libHTTPFields.a" "$OUT/libKeywardSupport.a" "$OUT/ctoml.o" \
    -lstdc++ -o "$OUT/fuzz-bodyrule"
# The request-head parser and chunked decoder: HTTP1Codec over HTTPFields, nothing else.
swiftc "${FLAGS[@]}" "${CMODS[@]}" -I "$OUT" -module-name HTTP1Codec -emit-library -static -emit-module \
    -emit-module-path "$OUT/HTTP1Codec.swiftmodule" -o "$OUT/libHTTP1Codec.a" Sources/HTTP1Codec/*.swift
swiftc "${FLAGS[@]}" "${CMODS[@]}" -I "$OUT" fuzz/FuzzRequestHead.swift "$OUT/libHTTP1Codec.a" "$OUT/libHTTPFields.a" \
    -o "$OUT/fuzz-http1"
swiftc "${FLAGS[@]}" "${CMODS[@]}" -I "$OUT" fuzz/FuzzSessionToken.swift "$OUT/libSessions.a" \
    "$OUT/libKeywardCrypto.a" "$OUT/libKeywardSupport.a" "$OUT/openssl_shims.o" -lssl -lcrypto -o "$OUT/fuzz-session"
swiftc "${FLAGS[@]}" "${CMODS[@]}" -I "$OUT" fuzz/FuzzIntegrityToken.swift "$OUT/libPlayIntegrity.a" \
    "$OUT/libKeywardCrypto.a" "$OUT/libKeywardSupport.a" "$OUT/openssl_shims.o" -lssl -lcrypto -o "$OUT/fuzz-integrity"

# Seed corpus: the real vectors (decoded from base64), kept in Tests/Fixtures/vectors.
SEEDS="$OUT/seeds"
mkdir -p "$SEEDS"
python3 - "$SEEDS" <<'PY'
import base64, glob, os, sys
out = sys.argv[1]
for path in glob.glob("Tests/Fixtures/vectors/appattest/*/*.b64*"):
    text = "".join(open(path).read().split()).replace("-", "+").replace("_", "/")
    data = base64.b64decode(text + "=" * (-len(text) % 4))
    name = path.split("/")[-2] + "-" + os.path.basename(path)
    open(os.path.join(out, name), "wb").write(data)
PY

# The request-head target's seeds: every head of the differential corpus, as bytes.
mkdir -p "$OUT/seeds-http1"
python3 - "$OUT/seeds-http1" <<'PY'
import json, os, sys
for index, case in enumerate(json.load(open("Tests/Fixtures/http1-heads/corpus.json"))):
    open(os.path.join(sys.argv[1], "%03d-%s" % (index, case["name"])), "wb").write(case["head"].encode("latin-1"))
PY

# Body rules and usage: request bodies and answers in each provider's documented shape.
mkdir -p "$OUT/seeds-bodyrule"
python3 - "$OUT/seeds-bodyrule" <<'PY'
import os, sys
seeds = [
    '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true}',
    '{"model":"gpt-4o-mini","max_tokens":10,"stream_options":{}}',
    '{"contents":[],"generationConfig":{"temperature":1,"candidateCount":2}}',
    '{"contents":[],"generation_config":{"max_output_tokens":100}}',
    '{"model":"m","input":"hi","stream":true,"max_output_tokens":64}',
    '{"usage":{"prompt_tokens":1200,"completion_tokens":300}}',
    'data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3}}\n\ndata: [DONE]\n\n',
    'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}\n\n'
    'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":20}}\n\n',
    'data: {"type":"response.completed","response":{"usage":{"input_tokens":10,"output_tokens":20}}}\n\n',
    '[{"candidates":[],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":7,"thoughtsTokenCount":2}}]',
]
for index, text in enumerate(seeds):
    open(os.path.join(sys.argv[1], "%02d" % index), "wb").write(text.encode())
PY

# Receipt payloads: the signed content of every real attestation's receipt (openssl cms extracts
# it without judging the signer), so the fuzzer starts from Apple's exact encoding.
mkdir -p "$OUT/seeds-receipt"
python3 - "$OUT/seeds-receipt" <<'PY'
import base64, glob, os, subprocess, sys
def item(data, i):
    # one CBOR data item's (major type, argument, end of header)
    major, info = data[i] >> 5, data[i] & 31
    i += 1
    if info < 24: return major, info, i
    size = {24: 1, 25: 2, 26: 4, 27: 8}[info]
    return major, int.from_bytes(data[i:i + size], "big"), i + size
def receipt(data):
    # attStmt.receipt: the byte string after the text key "receipt"
    key = b"\x67receipt"
    i = data.index(key) + len(key)
    major, arg, i = item(data, i)
    return data[i:i + arg]
out = sys.argv[1]
for path in glob.glob("Tests/Fixtures/vectors/appattest/*/*attestation*.b64*"):
    text = "".join(open(path).read().split()).replace("-", "+").replace("_", "/")
    data = base64.b64decode(text + "=" * (-len(text) % 4))
    content = subprocess.run(["openssl", "cms", "-verify", "-noverify", "-binary", "-inform", "DER"],
                             input=receipt(data), capture_output=True, check=True).stdout
    name = path.split("/")[-2] + "-" + os.path.basename(path) + ".payload"
    open(os.path.join(out, name), "wb").write(content)
PY

# The other targets write their own seeds (valid paths and queries; a session token and an integrity
# token made with the fuzzers' fixed test keys, and mutations of them) when given
# KEYWARD_FUZZ_WRITE_SEEDS=<dir>, then exit.
for target in proxypath session integrity; do
    mkdir -p "$OUT/seeds-$target"
    SWIFT_BACKTRACE=enable=no KEYWARD_FUZZ_WRITE_SEEDS="$OUT/seeds-$target" "$OUT/fuzz-$target"
done

for target in "${TARGETS[@]}"; do
    CORPUS="$OUT/corpus-$target"
    TARGET_SEEDS="$SEEDS"
    [ -d "$OUT/seeds-$target" ] && TARGET_SEEDS="$OUT/seeds-$target"
    mkdir -p "$CORPUS" "$OUT/crashes-$target"
    echo "== fuzz-$target for ${SECONDS_PER_TARGET}s"
    SWIFT_BACKTRACE=enable=no "$OUT/fuzz-$target" "$CORPUS" "$TARGET_SEEDS" \
        -max_total_time="$SECONDS_PER_TARGET" -max_len=16384 -rss_limit_mb=1024 -print_final_stats=1 \
        -artifact_prefix="$OUT/crashes-$target/" 2>&1 | tail -n 40
done
