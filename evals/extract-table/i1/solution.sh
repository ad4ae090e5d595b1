#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > table.csv <<'EOF'
name,ms,runs
parse,12.5,40
render,3.1,40
save,48.0,10
EOF
