#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > RELEASE_CHECKLIST.md <<'EOF'
# Release 4.2.0

- [ ] Run `make verify`
- [ ] Run `make bundle`
- [ ] Set VERSION to 4.2.0
- [ ] Add the 4.2.0 entry to CHANGELOG.md
- [ ] Commit and tag `v4.2.0`
- [ ] Push the tag: `git push origin v4.2.0`
EOF
