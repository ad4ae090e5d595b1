#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > CHANGELOG.md <<'EOF'
# Changelog

## 2.0.0

### Features

- new plugin loader
- remove the legacy v1 API

### Fixes

- reject empty names

## 0.0.1

### Features

- initial release
EOF
