#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > .env <<'EOF'
METRICS_ENABLED=false
QUEUE_URL=redis://localhost:6379/0
WORKER_RETRY=3
WORKER_THREADS=4
EOF
