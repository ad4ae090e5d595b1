#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
want=$(cat <<'EOF'
Emma
Leo
mia
noah
EOF
        )
        [ "$(grep -v '^$' sorted.txt 2>/dev/null)" = "$want" ] || { echo "sorted.txt is not sorted as expected"; exit 1; }
exit 0
