#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
for f in VERSION project.toml bin/widget.sh README.md; do
  grep -qF '0.9.9' "$f" && { echo "$f still says 0.9.9"; exit 1; }
  grep -qF '1.0.0' "$f" || { echo "$f does not say 1.0.0"; exit 1; }
done
[ "$(sh bin/widget.sh --version)" = "widget 1.0.0" ] || { echo "bin/widget.sh --version is wrong"; exit 1; }
grep -q '^## 0.9.9' CHANGELOG.md || { echo "the 0.9.9 entry of CHANGELOG.md was changed"; exit 1; }
exit 0
