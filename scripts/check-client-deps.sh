#!/usr/bin/env bash
# Checks that the KeywardClient library (the SDK apps link) depends on nothing but the system:
# no target or product of this package in its dependency graph, and no import beyond
# Foundation, FoundationNetworking, DeviceCheck and Security in its sources. Then builds the
# product alone. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
swift package describe --type json > .build/package-description.json
python3 - .build/package-description.json <<'PY'
import json, re, sys, pathlib
package = json.load(open(sys.argv[1]))
targets = {t["name"]: t for t in package["targets"]}
products = {p["name"]: p for p in package["products"]}
product = products.get("KeywardClient")
if product is None:
    sys.exit("check-client-deps: no KeywardClient product in Package.swift")
seen, pending = set(), list(product["targets"])
while pending:
    name = pending.pop()
    if name in seen:
        continue
    seen.add(name)
    target = targets[name]
    pending += target.get("target_dependencies", [])
    for dependency in target.get("product_dependencies", []):
        pending += products[dependency]["targets"] if dependency in products else [dependency]
extra = sorted(seen - {"KeywardClient"})
if extra:
    sys.exit(f"check-client-deps: KeywardClient pulls in {', '.join(extra)}; it must depend on Foundation only")
allowed = {"Foundation", "FoundationNetworking", "DeviceCheck", "Security"}
bad = []
for source in sorted(pathlib.Path(targets["KeywardClient"]["path"]).rglob("*.swift")):
    for number, line in enumerate(source.read_text().splitlines(), 1):
        match = re.match(r"\s*(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:\w+\s+)?([A-Za-z_][\w.]*)", line)
        if match and match.group(1).split(".")[0] not in allowed:
            bad.append(f"{source}:{number}: import {match.group(1)}")
if bad:
    sys.exit("check-client-deps: imports outside Foundation:\n" + "\n".join(bad))
print(f"check-client-deps: KeywardClient depends on no other target ({len(targets)} in the package); imports are system only")
PY
swift build --product KeywardClient 2>&1 | tail -1
