#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
sed -i 's/0.9.9/1.0.0/g' VERSION project.toml bin/widget.sh README.md
