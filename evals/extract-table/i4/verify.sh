#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
[ -f table.csv ] || { echo "no table.csv"; exit 1; }
        want=$(cat <<'EOF'
path,requests,p95_ms
/api/items,10234,88
/api/login,2210,140
/health,9000,2
/api/search,1777,310
EOF
        )
        got=$(grep -v '^[[:space:]]*$' table.csv | tr -d '\r')
        [ "$got" = "$want" ] || { echo "table.csv differs:"; echo "$got"; exit 1; }
exit 0
