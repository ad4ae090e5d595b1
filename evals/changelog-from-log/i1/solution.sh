#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > CHANGELOG.md <<'EOF'
# Changelog

## 1.4.0

### Features

- add --json to the list command
- support XDG config paths

### Fixes

- keep trailing newline in exports

## 0.0.1

### Features

- initial release
EOF
