#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
[ -f .env ] || { echo "no .env"; exit 1; }
        want=$(cat <<'EOF'
METRICS_ENABLED=false
QUEUE_URL=redis://localhost:6379/0
WORKER_RETRY=3
WORKER_THREADS=4
EOF
        )
        got=$(grep -v '^[[:space:]]*$' .env)
        [ "$got" = "$want" ] || { echo "got:"; echo "$got"; exit 1; }
        grep -q '^\[' settings.ini || { echo "settings.ini was changed"; exit 1; }
exit 0
