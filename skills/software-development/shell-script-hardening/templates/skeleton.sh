#!/usr/bin/env bash
# [One line: what this script does.]
# Usage: [name] [-n] [-v] INPUT...
set -euo pipefail

readonly PROG=${0##*/}
dry_run=0
verbose=0

usage() {
  cat <<USAGE
Usage: $PROG [-n] [-v] INPUT...
  -n  dry run: print what would change, change nothing
  -v  verbose output on stderr
  -h  show this help
USAGE
}

log() { if (( verbose )); then printf '%s: %s\n' "$PROG" "$*" >&2; fi; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }

run() {
  # Print instead of executing in dry-run mode; arguments stay quoted.
  if (( dry_run )); then printf 'would run:'; printf ' %q' "$@"; printf '\n'; else "$@"; fi
}

while getopts ':nvh' opt; do
  case $opt in
    n) dry_run=1 ;;
    v) verbose=1 ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
(( $# > 0 )) || { usage >&2; exit 2; }

for cmd in awk sort; do
  command -v "$cmd" >/dev/null || die "missing required command: $cmd"
done

workdir=$(mktemp -d)
trap 'rm -r -- "$workdir"' EXIT

for input in "$@"; do
  [[ -r $input ]] || die "cannot read $input"
  log "processing $input"
  # [the real work; write intermediate files under "$workdir"]
  run wc -l -- "$input"
done
