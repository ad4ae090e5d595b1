#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > RELEASE_CHECKLIST.md <<'EOF'
# Release 3.0.0

- [ ] Run `make unit`
- [ ] Run `make e2e`
- [ ] Run `make image`
- [ ] Set VERSION to 3.0.0
- [ ] Add the 3.0.0 entry to CHANGELOG.md
- [ ] Commit and tag `v3.0.0`
- [ ] Push the tag: `git push origin v3.0.0`
EOF
