#!/bin/sh
# A reference solution (never shown to the agent): the family's own test
# runs it on a copy of the fixture to prove verify.sh accepts a correct answer.
set -eu
cat > greet.sh <<'EOF'
#!/bin/sh
# greet.sh: prints a greeting. Usage: greet.sh [--formal] NAME
formal=0
shout=0
while [ $# -gt 0 ]; do
  case "$1" in
    --formal) formal=1; shift ;;
    --shout) shout=1; shift ;;
    --) shift; break ;;
    -*) echo "greet.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
name="${1:?usage: greet.sh [--formal] NAME}"
if [ "$formal" = 1 ]; then
  msg="Good day, $name."
else
  msg="Hello, $name!"
fi
if [ "$shout" = 1 ]; then
  msg=$(printf '%s' "$msg" | tr '[:lower:]' '[:upper:]')
fi
printf '%s\n' "$msg"
EOF
        printf '%s\n' 'check "--shout" "$(sh ./greet.sh --shout Ada)" "$(printf '"'"'HELLO, ADA!'"'"')"' > /tmp/knack-eval-check.$$
        sed -i "/^exit \$fail/e cat /tmp/knack-eval-check.$$" tests/run.sh
        rm -f /tmp/knack-eval-check.$$
