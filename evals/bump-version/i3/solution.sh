#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
sed -i 's/2.4.1/2.4.2/g' VERSION project.toml bin/widget.sh README.md
