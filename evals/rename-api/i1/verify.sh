#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
left=$(grep -rnw 'fetch_user' . | grep -v 'fetch_user_cache' || true)
[ -z "$left" ] || { echo "still uses fetch_user:"; echo "$left"; exit 1; }
grep -q '^load_user()' lib/api.sh || { echo "no load_user definition"; exit 1; }
grep -q '^fetch_user_cache()' lib/api.sh || { echo "fetch_user_cache was renamed too"; exit 1; }
grep -q 'load_user' README.md || { echo "README not updated"; exit 1; }
out=$(sh run.sh 2>&1) || { echo "run.sh failed: $out"; exit 1; }
[ "$out" = "$(printf 'fetch:one\nfetch:two')" ] || { echo "run.sh printed: $out"; exit 1; }
exit 0
