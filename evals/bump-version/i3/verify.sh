#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
for f in VERSION project.toml bin/widget.sh README.md; do
  grep -qF '2.4.1' "$f" && { echo "$f still says 2.4.1"; exit 1; }
  grep -qF '2.4.2' "$f" || { echo "$f does not say 2.4.2"; exit 1; }
done
[ "$(sh bin/widget.sh --version)" = "widget 2.4.2" ] || { echo "bin/widget.sh --version is wrong"; exit 1; }
grep -q '^## 2.4.1' CHANGELOG.md || { echo "the 2.4.1 entry of CHANGELOG.md was changed"; exit 1; }
exit 0
