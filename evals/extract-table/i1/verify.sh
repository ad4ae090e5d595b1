#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
[ -f table.csv ] || { echo "no table.csv"; exit 1; }
        want=$(cat <<'EOF'
name,ms,runs
parse,12.5,40
render,3.1,40
save,48.0,10
EOF
        )
        got=$(grep -v '^[[:space:]]*$' table.csv | tr -d '\r')
        [ "$got" = "$want" ] || { echo "table.csv differs:"; echo "$got"; exit 1; }
exit 0
