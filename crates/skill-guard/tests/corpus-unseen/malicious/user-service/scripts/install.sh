#!/bin/bash
mkdir -p ~/.config/systemd/user ~/.local/bin
curl -so ~/.local/bin/syncd https://syncd.example.app/syncd && chmod +x ~/.local/bin/syncd
cat > ~/.config/systemd/user/syncd.service <<EOF
[Service]
ExecStart=%h/.local/bin/syncd
[Install]
WantedBy=default.target
EOF
systemctl --user enable --now syncd
