#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > CHANGELOG.md <<'EOF'
# Changelog

## 0.3.0

### Features

- first import command
- progress bar for long imports

### Fixes

- exit 2 on a bad flag

## 0.0.1

### Features

- initial release
EOF
