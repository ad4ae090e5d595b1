#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
[ -f table.csv ] || { echo "no table.csv"; exit 1; }
        want=$(cat <<'EOF'
module,lines,covered
core,1200,1100
cli,300,210
EOF
        )
        got=$(grep -v '^[[:space:]]*$' table.csv | tr -d '\r')
        [ "$got" = "$want" ] || { echo "table.csv differs:"; echo "$got"; exit 1; }
exit 0
