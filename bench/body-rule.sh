#!/usr/bin/env bash
# Instructions an AI allow rule adds to one call, counted by valgrind's callgrind: the `json`
# table's check of a typical chat-completions body (the cap and the usage request added) and the
# usage scan of a typical answer (a 0.6 KiB JSON answer, a 7 KiB stream of 42 events), each on
# its own: `keyward-bench body-rule --part P` runs under callgrind with N and 11N calls, and the
# difference over 10N is the figure. Set beside bench/instructions.sh's per-request figure.
#
# Usage: bench/body-rule.sh [BINARY (default: a release build of keyward-bench)] [N (default 1000)]
set -euo pipefail
cd "$(dirname "$0")/.."
calls="${2:-1000}"
if [ -n "${1:-}" ]; then
  bench="$1"
else
  swift build -c release --product keyward-bench >/dev/null
  bench="$(swift build -c release --show-bin-path)/keyward-bench"
fi
command -v valgrind >/dev/null || { echo "needs valgrind" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/keyward-body-rule.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# Valgrind 3.19 gives up on the DWARF 5 that Swift 6 writes: count a copy without debug sections.
objcopy --strip-debug "$bench" "$work/keyward-bench"

total() {  # total instructions of one run
  valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/keyward-bench" body-rule --part "$1" --calls "$2" >/dev/null 2>"$work/log"
  grep -E "^summary:|^totals:" "$work/out" | head -1 | awk '{print $2}'
}
for part in check json stream; do
  small=$(total "$part" "$calls")
  large=$(total "$part" "$((calls * 11))")
  echo "body-rule $part: $(( (large - small) / (calls * 10) )) instructions per call"
done
