#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > .env <<'EOF'
CACHE_TTL=300
DATABASE_NAME=orders
DATABASE_POOL_SIZE=10
DATABASE_USER=app
EOF
