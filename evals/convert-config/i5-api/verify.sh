#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
[ -f .env ] || { echo "no .env"; exit 1; }
        want=$(cat <<'EOF'
API_BASE_PATH=/v2
API_TIMEOUT_MS=2500
AUTH_ISSUER=https://id.example.com
EOF
        )
        got=$(grep -v '^[[:space:]]*$' .env)
        [ "$got" = "$want" ] || { echo "got:"; echo "$got"; exit 1; }
        grep -q '^\[' settings.ini || { echo "settings.ini was changed"; exit 1; }
exit 0
