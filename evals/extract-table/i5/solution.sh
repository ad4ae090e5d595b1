#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > table.csv <<'EOF'
module,lines,covered
core,1200,1100
cli,300,210
EOF
