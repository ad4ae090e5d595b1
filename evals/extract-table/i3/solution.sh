#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > table.csv <<'EOF'
suite,passed,failed,skipped
unit,412,0,3
integration,57,2,0
e2e,9,1,4
EOF
