#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
[ -f table.csv ] || { echo "no table.csv"; exit 1; }
        want=$(cat <<'EOF'
mount,used_gb,free_gb
/,41,59
/home,120,380
EOF
        )
        got=$(grep -v '^[[:space:]]*$' table.csv | tr -d '\r')
        [ "$got" = "$want" ] || { echo "table.csv differs:"; echo "$got"; exit 1; }
exit 0
