#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
[ -f table.csv ] || { echo "no table.csv"; exit 1; }
        want=$(cat <<'EOF'
suite,passed,failed,skipped
unit,412,0,3
integration,57,2,0
e2e,9,1,4
EOF
        )
        got=$(grep -v '^[[:space:]]*$' table.csv | tr -d '\r')
        [ "$got" = "$want" ] || { echo "table.csv differs:"; echo "$got"; exit 1; }
exit 0
