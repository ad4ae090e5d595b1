#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
# The heading a line sits under (### level) within the 3.1.2 entry.
section_of() {
  awk -v want="$1" '/^## /{inside=($2=="3.1.2")} inside && /^### /{sec=$2} inside && index($0, want){print sec}' CHANGELOG.md
}
grep -q '^## 3.1.2' CHANGELOG.md || { echo "no ## 3.1.2 heading"; exit 1; }
first=$(grep -m1 '^## ' CHANGELOG.md)
[ "$first" = "## 3.1.2" ] || { echo "the newest entry is '$first'"; exit 1; }
grep -q '^- initial release' CHANGELOG.md || { echo "the old entry was lost"; exit 1; }
section_of 'handle a missing HOME' | grep -qx 'Fixes' || { echo "'handle a missing HOME' is not under Fixes"; exit 1; }
section_of 'retry on HTTP 429' | grep -qx 'Fixes' || { echo "'retry on HTTP 429' is not under Fixes"; exit 1; }
if grep -qF -- 'tidy imports' CHANGELOG.md; then echo "'tidy imports' should not be listed"; exit 1; fi
exit 0
