#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > CHANGELOG.md <<'EOF'
# Changelog

## 3.1.2

### Fixes

- handle a missing HOME
- retry on HTTP 429

## 0.0.1

### Features

- initial release
EOF
