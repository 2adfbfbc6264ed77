#!/usr/bin/env bash
# Builds the libFuzzer targets and runs them; see fuzz/README.md.
# usage: fuzz/run.sh [seconds-per-target (default 600)] [target ...]   targets: cbor attestation
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${1:-600}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(cbor attestation)
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
swiftc "${FLAGS[@]}" -I "$OUT" fuzz/FuzzCBORDecoder.swift "$OUT/libCBOR.a" -o "$OUT/fuzz-cbor"
swiftc "${FLAGS[@]}" -I "$OUT" fuzz/FuzzAttestationParser.swift "$OUT/libAppAttestParsing.a" "$OUT/libCBOR.a" \
    -o "$OUT/fuzz-attestation"

# Seed corpus: the real vectors (decoded from base64), read where they lie.
SEEDS="$OUT/seeds"
mkdir -p "$SEEDS"
python3 - "$SEEDS" <<'PY'
import base64, glob, os, sys
out = sys.argv[1]
for path in glob.glob("../shared/vectors/appattest/*/*.b64*"):
    text = "".join(open(path).read().split()).replace("-", "+").replace("_", "/")
    data = base64.b64decode(text + "=" * (-len(text) % 4))
    name = path.split("/")[-2] + "-" + os.path.basename(path)
    open(os.path.join(out, name), "wb").write(data)
PY

for target in "${TARGETS[@]}"; do
    CORPUS="$OUT/corpus-$target"
    mkdir -p "$CORPUS" "$OUT/crashes-$target"
    echo "== fuzz-$target for ${SECONDS_PER_TARGET}s"
    SWIFT_BACKTRACE=enable=no "$OUT/fuzz-$target" "$CORPUS" "$SEEDS" \
        -max_total_time="$SECONDS_PER_TARGET" -max_len=16384 -rss_limit_mb=1024 -print_final_stats=1 \
        -artifact_prefix="$OUT/crashes-$target/" 2>&1 | tail -n 40
done
