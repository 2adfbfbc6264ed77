#!/usr/bin/env bash
# Builds what deploy/Containerfile's build stage builds, without a container engine: copies
# exactly the paths its COPY lines name (relative to the build context, the repository root) into
# a scratch folder, and runs its `RUN swift build` line there. A file the build needs that the
# Containerfile does not copy fails here as it would in `docker build`.
# The line runs as written (a release build with --static-swift-stdlib: about a minute from
# scratch on two cores), and the binary it makes goes through scripts/check-release-binary.sh's
# checks (no library from the toolchain; runs with the toolchain hidden).
#   CONFIGURATION=debug bash deploy/check/containerfile.sh   # quicker, for trying a change
set -euo pipefail
cd "$(dirname "$0")/../.."
containerfile=deploy/Containerfile
configuration=${CONFIGURATION:-release}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The build stage: from its FROM line to the next FROM.
stage=$(awk '/^FROM /{n++} n==1' "$containerfile")
workdir=$(printf '%s\n' "$stage" | sed -n 's/^WORKDIR //p' | tail -1)
[ -n "$workdir" ] || { echo "containerfile check: no WORKDIR in the build stage" >&2; exit 1; }
while read -r _ source destination; do
  case "$destination" in
    ./) mkdir -p "$scratch/src"; cp -a "$source" "$scratch/src/" ;;
    *) mkdir -p "$scratch/src/$(dirname "$destination")"; cp -a "$source" "$scratch/src/$destination" ;;
  esac
  echo "copied $source → $workdir/${destination#./}"
done < <(printf '%s\n' "$stage" | grep -E '^COPY [^-]')
build=$(printf '%s\n' "$stage" | sed -n 's/^RUN \(swift build .*\)$/\1/p' | head -1)
[ -n "$build" ] || { echo "containerfile check: no 'RUN swift build' line in the build stage" >&2; exit 1; }
build=${build/-c release/-c $configuration}
echo "in $workdir (here $scratch/src): $build"
cd "$scratch/src"
start=$(date +%s)
eval "$build"
binary="$(swift build -c "$configuration" --show-bin-path)/keyward"
"$binary" --help > /dev/null
echo "ok   Containerfile build ($configuration) in $(( $(date +%s) - start )) s: $(du -h "$binary" | cut -f1) keyward"
cd - > /dev/null
if [ "$configuration" = release ]; then bash scripts/check-release-binary.sh "$binary"; fi
