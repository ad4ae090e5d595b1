#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
[ "$(tr -d ' \n' < count.txt 2>/dev/null)" = "6" ] || { echo "count.txt does not hold 6"; exit 1; }
exit 0
