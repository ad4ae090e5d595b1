#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > .env <<'EOF'
API_BASE_PATH=/v2
API_TIMEOUT_MS=2500
AUTH_ISSUER=https://id.example.com
EOF
