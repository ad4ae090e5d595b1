#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > table.csv <<'EOF'
path,requests,p95_ms
/api/items,10234,88
/api/login,2210,140
/health,9000,2
/api/search,1777,310
EOF
