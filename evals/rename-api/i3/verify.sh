#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
left=$(grep -rnw 'send_msg' . | grep -v 'send_msg_cache' || true)
[ -z "$left" ] || { echo "still uses send_msg:"; echo "$left"; exit 1; }
grep -q '^send_message()' lib/api.sh || { echo "no send_message definition"; exit 1; }
grep -q '^send_msg_cache()' lib/api.sh || { echo "send_msg_cache was renamed too"; exit 1; }
grep -q 'send_message' README.md || { echo "README not updated"; exit 1; }
out=$(sh run.sh 2>&1) || { echo "run.sh failed: $out"; exit 1; }
[ "$out" = "$(printf 'send:one\nsend:two')" ] || { echo "run.sh printed: $out"; exit 1; }
exit 0
