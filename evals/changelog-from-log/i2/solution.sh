#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > CHANGELOG.md <<'EOF'
# Changelog

## 0.9.0

### Fixes

- stop leaking file handles on retry
- parse dates in UTC

## 0.0.1

### Features

- initial release
EOF
