#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > RELEASE_CHECKLIST.md <<'EOF'
# Release 2.3.0

- [ ] Run `make test`
- [ ] Run `make lint`
- [ ] Run `make dist`
- [ ] Set VERSION to 2.3.0
- [ ] Add the 2.3.0 entry to CHANGELOG.md
- [ ] Commit and tag `v2.3.0`
- [ ] Push the tag: `git push origin v2.3.0`
EOF
