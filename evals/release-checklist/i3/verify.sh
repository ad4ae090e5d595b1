#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
[ -f RELEASE_CHECKLIST.md ] || { echo "no RELEASE_CHECKLIST.md"; exit 1; }
[ "$(grep -c -- '^- \[ \]' RELEASE_CHECKLIST.md)" -ge 6 ] || { echo "too few task items"; exit 1; }
grep -q -- '- \[ \].*make test' RELEASE_CHECKLIST.md || { echo "no item runs make test"; exit 1; }
grep -q -- '- \[ \].*make docs' RELEASE_CHECKLIST.md || { echo "no item runs make docs"; exit 1; }
grep -q -- '- \[ \].*make release-build' RELEASE_CHECKLIST.md || { echo "no item runs make release-build"; exit 1; }
grep -q 'v0.7.1' RELEASE_CHECKLIST.md || { echo "no tag v0.7.1"; exit 1; }
grep -qi 'changelog' RELEASE_CHECKLIST.md || { echo "no changelog step"; exit 1; }
grep -q -- '- \[ \].*VERSION' RELEASE_CHECKLIST.md || { echo "no VERSION step"; exit 1; }
exit 0
