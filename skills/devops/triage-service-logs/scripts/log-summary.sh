#!/usr/bin/env bash
# Summarize a log: line count, first/last line, counts per level, and the most
# frequent error/warning messages with volatile parts (numbers, ids) masked.
# Usage: log-summary.sh [-n TOP] [FILE...]   (reads stdin without FILE; .gz ok)
set -euo pipefail

top=10
while getopts ':n:h' opt; do
  case $opt in
    n) top=$OPTARG ;;
    h) sed -n '2,4p' "$0"; exit 0 ;;
    *) echo "usage: ${0##*/} [-n TOP] [FILE...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ $top =~ ^[0-9]+$ ]] || { echo "error: -n needs a number" >&2; exit 2; }

for f in "$@"; do
  [[ -f $f && -r $f ]] || { echo "error: cannot read $f" >&2; exit 1; }
done

read_input() {
  if (( $# == 0 )); then cat; return; fi
  local f
  for f in "$@"; do
    case $f in
      *.gz) gzip -dc -- "$f" ;;
      *) cat -- "$f" ;;
    esac
  done
}

read_input "$@" | LC_ALL=C awk -v top="$top" '
  function level(u) {
    if (u ~ /(^|[^A-Z])(FATAL|PANIC|EMERG|ALERT|CRIT|CRITICAL)([^A-Z]|$)/) return "FATAL"
    if (u ~ /(^|[^A-Z])(ERROR|ERR|SEVERE)([^A-Z]|$)/) return "ERROR"
    if (u ~ /(^|[^A-Z])(WARN|WARNING)([^A-Z]|$)/) return "WARN"
    if (u ~ /(^|[^A-Z])(INFO|NOTICE)([^A-Z]|$)/) return "INFO"
    if (u ~ /(^|[^A-Z])(DEBUG|TRACE)([^A-Z]|$)/) return "DEBUG"
    if (u ~ /EXCEPTION|TRACEBACK|SEGFAULT|OUT OF MEMORY|OOM|CONNECTION REFUSED|TIMED OUT|TIMEOUT/) return "ERROR"
    return "OTHER"
  }
  function shape(s) {
    sub(/^[A-Z][a-z][a-z] +[0-9]+ [0-9:]+ /, "", s)            # syslog date
    gsub(/0x[0-9A-Fa-f]+/, "HEX", s)
    gsub(/[0-9A-Fa-f]+-[0-9A-Fa-f]+-[0-9A-Fa-f]+-[0-9A-Fa-f]+-[0-9A-Fa-f]+/, "UUID", s)
    gsub(/[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]/, "ID", s)
    gsub(/[0-9]+/, "N", s)
    sub(/^N-N-N[T ]N:N:N([.,]N)?(Z|[+-]N(:N)?)? */, "", s)   # ISO date
    sub(/^\[[^]]*\] */, "", s)
    if (length(s) > 160) s = substr(s, 1, 157) "..."
    return s
  }
  {
    total++
    if (total == 1) first = $0
    last = $0
    lv = level(toupper($0))
    count[lv]++
    if (lv == "FATAL" || lv == "ERROR" || lv == "WARN") {
      msg = shape($0)
      key = lv " " msg
      if (!(key in seen)) { seen[key] = total; order[++nk] = key; text[key] = msg }
      hits[key]++
    }
  }
  END {
    if (total == 0) { print "no input lines"; exit 0 }
    printf "lines: %d\nfirst: %s\nlast:  %s\n\nby level:\n", total, substr(first, 1, 160), substr(last, 1, 160)
    split("FATAL ERROR WARN INFO DEBUG OTHER", levels, " ")
    for (i = 1; i <= 6; i++) if (count[levels[i]]) printf "  %-6s %d\n", levels[i], count[levels[i]]
    if (nk == 0) { print "\nno error or warning lines"; exit 0 }
    printf "\ntop %d problem messages (count, first line no., message):\n", top
    # selection sort by count, then by first appearance; fine for log triage sizes
    for (shown = 0; shown < top && shown < nk; shown++) {
      best = 0
      for (i = 1; i <= nk; i++) {
        k = order[i]
        if (k in done) continue
        if (!best || hits[k] > hits[order[best]]) best = i
      }
      k = order[best]; done[k] = 1
      printf "%7d  L%-7d %s\n", hits[k], seen[k], text[k]
    }
  }'
