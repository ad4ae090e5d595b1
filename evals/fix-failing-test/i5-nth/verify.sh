#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
cat > /tmp/knack-eval-test.$$ <<'EOF'
#!/bin/sh
# test.sh: checks lib.sh. Do not change this file.
. ./lib.sh
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok - $1"; else echo "FAIL - $1: got '$2', want '$3'"; fail=1; fi; }
printf "one\ntwo\nthree\n" > /tmp/knack-eval-lines.$$
check "second line" "$(nth_line 2 /tmp/knack-eval-lines.$$)" two
check "first line" "$(nth_line 1 /tmp/knack-eval-lines.$$)" one
rm -f /tmp/knack-eval-lines.$$
exit $fail
EOF
        cmp -s test.sh /tmp/knack-eval-test.$$ || { rm -f /tmp/knack-eval-test.$$; echo "test.sh was changed"; exit 1; }
        rm -f /tmp/knack-eval-test.$$
        out=$(sh test.sh 2>&1) || { echo "$out"; exit 1; }
exit 0
