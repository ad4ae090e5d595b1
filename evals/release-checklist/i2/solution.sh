#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > RELEASE_CHECKLIST.md <<'EOF'
# Release 1.0.0

- [ ] Run `make check`
- [ ] Run `make build`
- [ ] Run `make package`
- [ ] Set VERSION to 1.0.0
- [ ] Add the 1.0.0 entry to CHANGELOG.md
- [ ] Commit and tag `v1.0.0`
- [ ] Push the tag: `git push origin v1.0.0`
EOF
