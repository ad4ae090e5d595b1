#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
# The heading a line sits under (### level) within the 2.0.0 entry.
section_of() {
  awk -v want="$1" '/^## /{inside=($2=="2.0.0")} inside && /^### /{sec=$2} inside && index($0, want){print sec}' CHANGELOG.md
}
grep -q '^## 2.0.0' CHANGELOG.md || { echo "no ## 2.0.0 heading"; exit 1; }
first=$(grep -m1 '^## ' CHANGELOG.md)
[ "$first" = "## 2.0.0" ] || { echo "the newest entry is '$first'"; exit 1; }
grep -q '^- initial release' CHANGELOG.md || { echo "the old entry was lost"; exit 1; }
section_of 'new plugin loader' | grep -qx 'Features' || { echo "'new plugin loader' is not under Features"; exit 1; }
section_of 'remove the legacy v1 API' | grep -qx 'Features' || { echo "'remove the legacy v1 API' is not under Features"; exit 1; }
section_of 'reject empty names' | grep -qx 'Fixes' || { echo "'reject empty names' is not under Fixes"; exit 1; }
if grep -qF -- 'cover the loader' CHANGELOG.md; then echo "'cover the loader' should not be listed"; exit 1; fi
exit 0
