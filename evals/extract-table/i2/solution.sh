#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > table.csv <<'EOF'
mount,used_gb,free_gb
/,41,59
/home,120,380
EOF
