#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
left=$(grep -rnw 'parse_cfg' . | grep -v 'parse_cfg_cache' || true)
[ -z "$left" ] || { echo "still uses parse_cfg:"; echo "$left"; exit 1; }
grep -q '^read_config()' lib/api.sh || { echo "no read_config definition"; exit 1; }
grep -q '^parse_cfg_cache()' lib/api.sh || { echo "parse_cfg_cache was renamed too"; exit 1; }
grep -q 'read_config' README.md || { echo "README not updated"; exit 1; }
out=$(sh run.sh 2>&1) || { echo "run.sh failed: $out"; exit 1; }
[ "$out" = "$(printf 'parse:one\nparse:two')" ] || { echo "run.sh printed: $out"; exit 1; }
exit 0
