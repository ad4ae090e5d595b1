#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
for f in VERSION project.toml bin/widget.sh README.md; do
  grep -qF '0.1.7' "$f" && { echo "$f still says 0.1.7"; exit 1; }
  grep -qF '0.2.0' "$f" || { echo "$f does not say 0.2.0"; exit 1; }
done
[ "$(sh bin/widget.sh --version)" = "widget 0.2.0" ] || { echo "bin/widget.sh --version is wrong"; exit 1; }
grep -q '^## 0.1.7' CHANGELOG.md || { echo "the 0.1.7 entry of CHANGELOG.md was changed"; exit 1; }
exit 0
