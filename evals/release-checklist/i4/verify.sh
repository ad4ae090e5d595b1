#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
[ -f RELEASE_CHECKLIST.md ] || { echo "no RELEASE_CHECKLIST.md"; exit 1; }
[ "$(grep -c -- '^- \[ \]' RELEASE_CHECKLIST.md)" -ge 5 ] || { echo "too few task items"; exit 1; }
grep -q -- '- \[ \].*make verify' RELEASE_CHECKLIST.md || { echo "no item runs make verify"; exit 1; }
grep -q -- '- \[ \].*make bundle' RELEASE_CHECKLIST.md || { echo "no item runs make bundle"; exit 1; }
grep -q 'v4.2.0' RELEASE_CHECKLIST.md || { echo "no tag v4.2.0"; exit 1; }
grep -qi 'changelog' RELEASE_CHECKLIST.md || { echo "no changelog step"; exit 1; }
grep -q -- '- \[ \].*VERSION' RELEASE_CHECKLIST.md || { echo "no VERSION step"; exit 1; }
exit 0
