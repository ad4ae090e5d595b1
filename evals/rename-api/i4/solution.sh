#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
sed -i 's/\bparse_cfg\b/read_config/g' lib/api.sh run.sh lib/extra.sh README.md
