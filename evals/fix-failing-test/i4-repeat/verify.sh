#!/bin/sh
# Runs in the workspace after the agent has finished; exit 0 = pass.
set -u
cat > /tmp/knack-eval-test.$$ <<'EOF'
#!/bin/sh
# test.sh: checks lib.sh. Do not change this file.
. ./lib.sh
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok - $1"; else echo "FAIL - $1: got '$2', want '$3'"; fail=1; fi; }
check "x 3 times" "$(repeat_char x 3)" xxx
check "y once" "$(repeat_char y 1)" y
exit $fail
EOF
        cmp -s test.sh /tmp/knack-eval-test.$$ || { rm -f /tmp/knack-eval-test.$$; echo "test.sh was changed"; exit 1; }
        rm -f /tmp/knack-eval-test.$$
        out=$(sh test.sh 2>&1) || { echo "$out"; exit 1; }
exit 0
