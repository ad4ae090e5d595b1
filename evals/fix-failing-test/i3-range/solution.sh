#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
sed -i 's/echo \$((\$2 - \$1))/echo $(($2 - $1 + 1))/' lib.sh
