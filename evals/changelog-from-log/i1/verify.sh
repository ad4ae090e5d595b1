#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
# The heading a line sits under (### level) within the 1.4.0 entry.
section_of() {
  awk -v want="$1" '/^## /{inside=($2=="1.4.0")} inside && /^### /{sec=$2} inside && index($0, want){print sec}' CHANGELOG.md
}
grep -q '^## 1.4.0' CHANGELOG.md || { echo "no ## 1.4.0 heading"; exit 1; }
first=$(grep -m1 '^## ' CHANGELOG.md)
[ "$first" = "## 1.4.0" ] || { echo "the newest entry is '$first'"; exit 1; }
grep -q '^- initial release' CHANGELOG.md || { echo "the old entry was lost"; exit 1; }
section_of 'add --json to the list command' | grep -qx 'Features' || { echo "'add --json to the list command' is not under Features"; exit 1; }
section_of 'support XDG config paths' | grep -qx 'Features' || { echo "'support XDG config paths' is not under Features"; exit 1; }
section_of 'keep trailing newline in exports' | grep -qx 'Fixes' || { echo "'keep trailing newline in exports' is not under Fixes"; exit 1; }
if grep -qF -- 'bump dev dependencies' CHANGELOG.md; then echo "'bump dev dependencies' should not be listed"; exit 1; fi
exit 0
