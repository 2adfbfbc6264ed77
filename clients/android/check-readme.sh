#!/usr/bin/env bash
# Compiles the Java of README.md's "Android" section — the two adapters, the client and its calls,
# the error handling — against the built jar and src/readme-stubs (the shapes of the Android,
# Jetpack Security and Play Integrity classes the adapters name, only so that javac can check them
# here: the real ones need the Android SDK). A README change that no longer compiles fails this.
# Run after build.sh.
set -euo pipefail
cd "$(dirname "$0")"
out=build/readme-check
rm -rf "$out"
mkdir -p "$out/src" "$out/classes"
python3 - "$out/src" <<'PY'
import re, sys, pathlib
target = pathlib.Path(sys.argv[1])
text = pathlib.Path("../../README.md").read_text(encoding="utf-8")
start = text.index("### Android: the keyward-client library")
section = text[start:text.index("### ", start + 4)]
blocks = re.findall(r"```java\n(.*?)```", section, re.S)
if len(blocks) != 4:
    sys.exit(f"check-readme: expected 4 java blocks in README's Android section, found {len(blocks)}")
for block in blocks[:2]:
    name = re.search(r"^final class (\w+)", block, re.M).group(1)
    (target / f"{name}.java").write_text(block, encoding="utf-8")
indent = lambda code: "\n".join("        " + line for line in code.splitlines())
(target / "ReadmeCalls.java").write_text(f"""import dev.keyward.client.*;

final class ReadmeCalls {{
    android.content.Context context;
    void show(String text) {{}}
    void showDailyLimitReached(Integer seconds) {{}}
    void retryLater(int seconds) {{}}
    void retryWithBackoff() {{}}
    void hideFeature(String requestId) {{}}
    void askUserToUpdate() {{}}
    void report(String requestId) {{}}

    void calls() throws Exception {{
{indent(blocks[2])}
    }}

    void errors(KeywardClient keyward) {{
{indent(blocks[3])}
    }}
}}
""", encoding="utf-8")
PY
javac --release 17 -encoding UTF-8 -cp build/keyward-client.jar -d "$out/classes" \
  $(find src/readme-stubs "$out/src" -name '*.java' | sort)
echo "clients/android: README's Android code compiles"
