#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
left=$(grep -rnw 'mk_slug' . | grep -v 'mk_slug_cache' || true)
[ -z "$left" ] || { echo "still uses mk_slug:"; echo "$left"; exit 1; }
grep -q '^make_slug()' lib/api.sh || { echo "no make_slug definition"; exit 1; }
grep -q '^mk_slug_cache()' lib/api.sh || { echo "mk_slug_cache was renamed too"; exit 1; }
grep -q 'make_slug' README.md || { echo "README not updated"; exit 1; }
out=$(sh run.sh 2>&1) || { echo "run.sh failed: $out"; exit 1; }
[ "$out" = "$(printf 'mk:one\nmk:two')" ] || { echo "run.sh printed: $out"; exit 1; }
exit 0
