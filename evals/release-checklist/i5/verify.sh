#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
[ -f RELEASE_CHECKLIST.md ] || { echo "no RELEASE_CHECKLIST.md"; exit 1; }
[ "$(grep -c -- '^- \[ \]' RELEASE_CHECKLIST.md)" -ge 6 ] || { echo "too few task items"; exit 1; }
grep -q -- '- \[ \].*make unit' RELEASE_CHECKLIST.md || { echo "no item runs make unit"; exit 1; }
grep -q -- '- \[ \].*make e2e' RELEASE_CHECKLIST.md || { echo "no item runs make e2e"; exit 1; }
grep -q -- '- \[ \].*make image' RELEASE_CHECKLIST.md || { echo "no item runs make image"; exit 1; }
grep -q 'v3.0.0' RELEASE_CHECKLIST.md || { echo "no tag v3.0.0"; exit 1; }
grep -qi 'changelog' RELEASE_CHECKLIST.md || { echo "no changelog step"; exit 1; }
grep -q -- '- \[ \].*VERSION' RELEASE_CHECKLIST.md || { echo "no VERSION step"; exit 1; }
exit 0
