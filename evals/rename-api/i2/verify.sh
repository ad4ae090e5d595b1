#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
left=$(grep -rnw 'calc_total' . | grep -v 'calc_total_cache' || true)
[ -z "$left" ] || { echo "still uses calc_total:"; echo "$left"; exit 1; }
grep -q '^compute_total()' lib/api.sh || { echo "no compute_total definition"; exit 1; }
grep -q '^calc_total_cache()' lib/api.sh || { echo "calc_total_cache was renamed too"; exit 1; }
grep -q 'compute_total' README.md || { echo "README not updated"; exit 1; }
out=$(sh run.sh 2>&1) || { echo "run.sh failed: $out"; exit 1; }
[ "$out" = "$(printf 'calc:one\ncalc:two')" ] || { echo "run.sh printed: $out"; exit 1; }
exit 0
