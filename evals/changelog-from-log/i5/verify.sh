#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
# The heading a line sits under (### level) within the 0.3.0 entry.
section_of() {
  awk -v want="$1" '/^## /{inside=($2=="0.3.0")} inside && /^### /{sec=$2} inside && index($0, want){print sec}' CHANGELOG.md
}
grep -q '^## 0.3.0' CHANGELOG.md || { echo "no ## 0.3.0 heading"; exit 1; }
first=$(grep -m1 '^## ' CHANGELOG.md)
[ "$first" = "## 0.3.0" ] || { echo "the newest entry is '$first'"; exit 1; }
grep -q '^- initial release' CHANGELOG.md || { echo "the old entry was lost"; exit 1; }
section_of 'first import command' | grep -qx 'Features' || { echo "'first import command' is not under Features"; exit 1; }
section_of 'progress bar for long imports' | grep -qx 'Features' || { echo "'progress bar for long imports' is not under Features"; exit 1; }
section_of 'exit 2 on a bad flag' | grep -qx 'Fixes' || { echo "'exit 2 on a bad flag' is not under Fixes"; exit 1; }
if grep -qF -- 'run tests on macOS' CHANGELOG.md; then echo "'run tests on macOS' should not be listed"; exit 1; fi
exit 0
