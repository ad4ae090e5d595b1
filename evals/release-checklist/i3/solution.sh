#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > RELEASE_CHECKLIST.md <<'EOF'
# Release 0.7.1

- [ ] Run `make test`
- [ ] Run `make docs`
- [ ] Run `make release-build`
- [ ] Set VERSION to 0.7.1
- [ ] Add the 0.7.1 entry to CHANGELOG.md
- [ ] Commit and tag `v0.7.1`
- [ ] Push the tag: `git push origin v0.7.1`
EOF
