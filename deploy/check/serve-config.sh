#!/usr/bin/env bash
# Runs `keyward check-config` on exactly what the shipped deployment gives `serve`, without a
# container engine, so a deployment that cannot start fails CI:
#   1. compose: the keyward service's `command` (its --config path), its `volumes` (each host file
#      copied to its container path), its `environment` (`${VAR:?…}` taken as set) and its
#      `secrets` (each a file under /run/secrets/);
#   2. the image: the runtime stage's COPY lines (each file to its path in the image), its CMD,
#      and the environment compose gives it (the documented way to run the image).
# Container paths live under a scratch root, and each container path in the copied files and the
# environment is rewritten to its place there. Secret files hold stand-ins of the right shape:
# a generated session key, an empty retired-keys file (as compose.yaml allows), a dummy elsewhere.
# usage: deploy/check/serve-config.sh [KEYWARD_BINARY]   (default .build/debug/keyward)
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=$(realpath "${1:-.build/debug/keyward}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Writes, for one case ($1: compose or image), $work/$1/run.sh: the check-config call with its
# environment, every container path under $work/$1/root.
/usr/bin/python3 - "$work" "$binary" deploy/compose.yaml deploy/Containerfile <<'PY'
import json, os, re, shlex, shutil, subprocess, sys, yaml
work, binary, compose_path, containerfile_path = sys.argv[1:5]
service = yaml.safe_load(open(compose_path))["services"]["keyward"]
deploy_dir = os.path.dirname(compose_path)

def environment():
    """compose's environment for keyward: ${VAR:?…} / ${VAR:-…} / $VAR stand for a set value."""
    env = {}
    for name, value in (service.get("environment") or {}).items():
        env[name] = re.sub(r"\$\{?[A-Za-z_][A-Za-z0-9_]*(?::?[-?][^}]*)?\}?", "check-value", str(value))
    return env

def config_path(command):
    """The --config argument of a `serve` command."""
    if not command or command[0] != "serve" or "--config" not in command:
        sys.exit(f"serve-config check: FAIL: {command} is not `serve --config FILE`")
    return command[command.index("--config") + 1]

def prepare(case, files, command, env):
    """files: {container path: host path}. Writes the case's root and its run.sh."""
    root = os.path.join(work, case, "root")
    for target, source in files.items():
        os.makedirs(os.path.dirname(root + target), exist_ok=True)
        shutil.copyfile(source, root + target)
    for secret in service.get("secrets", []):
        path = root + "/run/secrets/" + secret
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if secret == "KEYWARD_SESSION_KEY":
            subprocess.run([binary, "keys", "generate", "--out", path], check=True, capture_output=True)
        elif secret == "KEYWARD_SESSION_KEYS_RETIRED":
            open(path, "w").close()
        else:
            open(path, "w").write("check-placeholder\n")
    # Container paths (/etc/keyward/…, /run/secrets/…) named in the copied files or the environment.
    prefixes = sorted({os.path.dirname(t) + "/" for t in files} | {"/run/secrets/"}, key=len, reverse=True)
    def relocate(text):
        return re.sub("|".join(re.escape(p) for p in prefixes), lambda m: root + m.group(0), text)
    for target in files:
        with open(root + target) as f: text = f.read()
        with open(root + target, "w") as f: f.write(relocate(text))
    env = {name: relocate(value) for name, value in env.items()}
    config = root + config_path(command)
    with open(os.path.join(work, case, "run.sh"), "w") as f:
        f.write("exec env -i PATH=/usr/bin:/bin " + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
                + f" {shlex.quote(binary)} check-config --config {shlex.quote(config)}\n")

# 1. compose.
files = {}
for volume in service.get("volumes", []):
    source, target = volume.split(":")[:2]
    source = os.path.normpath(os.path.join(deploy_dir, source))
    if os.path.isfile(source): files[target] = source
prepare("compose", files, service["command"], environment())

# 2. the image: the last stage's COPY lines that copy from the build context (not --from).
stages = re.split(r"(?m)^FROM ", open(containerfile_path).read())
runtime = stages[-1]
files = {}
for line in runtime.splitlines():
    parts = line.split()
    if len(parts) < 3 or parts[0] != "COPY" or parts[1].startswith("--"): continue
    *sources, destination = parts[1:]
    for source in sources:
        files[destination + os.path.basename(source) if destination.endswith("/") else destination] = source
cmd = re.search(r"(?m)^CMD (\[.*\])$", runtime)
if not cmd: sys.exit("serve-config check: FAIL: no CMD [...] line in the Containerfile's runtime stage")
env = environment()
env.update({m.group(1): "check-value" for m in re.finditer(r"(?m)^ENV (\w+)=", runtime)})
prepare("image", files, json.loads(cmd.group(1)), env)
PY

for case in compose image; do
  if ! bash "$work/$case/run.sh" > "$work/$case.log" 2>&1; then
    cat "$work/$case.log" >&2
    echo "serve-config check: FAIL: check-config refuses what the $case deployment gives serve" >&2
    exit 1
  fi
  echo "ok   check-config accepts what the $case deployment gives serve"
done
