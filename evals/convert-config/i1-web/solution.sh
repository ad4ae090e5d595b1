#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > .env <<'EOF'
LOG_LEVEL=info
SERVER_HOST=0.0.0.0
SERVER_PORT=8080
EOF
