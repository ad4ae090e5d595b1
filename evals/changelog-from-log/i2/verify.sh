#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
# The heading a line sits under (### level) within the 0.9.0 entry.
section_of() {
  awk -v want="$1" '/^## /{inside=($2=="0.9.0")} inside && /^### /{sec=$2} inside && index($0, want){print sec}' CHANGELOG.md
}
grep -q '^## 0.9.0' CHANGELOG.md || { echo "no ## 0.9.0 heading"; exit 1; }
first=$(grep -m1 '^## ' CHANGELOG.md)
[ "$first" = "## 0.9.0" ] || { echo "the newest entry is '$first'"; exit 1; }
grep -q '^- initial release' CHANGELOG.md || { echo "the old entry was lost"; exit 1; }
section_of 'stop leaking file handles on retry' | grep -qx 'Fixes' || { echo "'stop leaking file handles on retry' is not under Fixes"; exit 1; }
section_of 'parse dates in UTC' | grep -qx 'Fixes' || { echo "'parse dates in UTC' is not under Fixes"; exit 1; }
if grep -qF -- 'explain the cache folder' CHANGELOG.md; then echo "'explain the cache folder' should not be listed"; exit 1; fi
exit 0
