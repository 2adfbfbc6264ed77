#!/usr/bin/env bash
# The differential test of Keyward's request-head parser against Python's h11: writes h11's
# reading of every head in Tests/Fixtures/http1-heads/corpus.json to
# Tests/Fixtures/http1-heads/h11-verdicts.json, then runs HTTP1DifferentialTests, which compares
# Keyward's parser with it case by case and fails on any disagreement that is not listed (with
# its reason) in the test, or on a listed one that no longer occurs.
#
# h11 is pinned (scripts/h11-differential-requirements.txt) and installed from PyPI into a
# virtualenv under .build. The verdicts file is committed, so the Swift test runs without it;
# `--check` only fails when the committed verdicts are not what the pinned h11 says.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/h11-venv
requirements=scripts/h11-differential-requirements.txt
if ! cmp -s "$requirements" "$venv/requirements.txt"; then
  echo "h11-differential: installing $(grep -v '^#' "$requirements" | tr '\n' ' ')into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$venv/requirements.txt"
fi
verdicts=Tests/Fixtures/http1-heads/h11-verdicts.json
if [ "${1:-}" = "--check" ]; then
  fresh="$(mktemp)"
  trap 'rm -f "$fresh"' EXIT
  "$venv/bin/python" scripts/h11-reading.py Tests/Fixtures/http1-heads/corpus.json "$fresh"
  diff -u "$verdicts" "$fresh"
  echo "h11-differential: $verdicts is what h11 says"
else
  "$venv/bin/python" scripts/h11-reading.py Tests/Fixtures/http1-heads/corpus.json "$verdicts"
fi
swift test --filter HTTP1DifferentialTests 2>&1 | grep -E "error|Executed"
