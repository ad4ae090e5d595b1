#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
got=$(sh ./greet.sh --reverse Ada 2>&1) || { echo "the command failed: $got"; exit 1; }
want=$(printf '!adA ,olleH')
[ "$got" = "$want" ] || { echo "sh ./greet.sh --reverse Ada printed '$got', expected '$want'"; exit 1; }
sh ./greet.sh --formal Ada | grep -q 'Ada' || { echo "--formal broke"; exit 1; }
sh ./greet.sh --reverse --formal Ada >/dev/null 2>&1 || { echo "--reverse does not combine with --formal"; exit 1; }
sh tests/run.sh >/dev/null 2>&1 || { echo "tests/run.sh fails"; exit 1; }
grep -q -- '--reverse' tests/run.sh || { echo "tests/run.sh has no check for --reverse"; exit 1; }
[ "$(grep -c '^check ' tests/run.sh)" -ge 3 ] || { echo "tests/run.sh lost checks"; exit 1; }
exit 0
