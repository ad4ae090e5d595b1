#!/usr/bin/env bash
# Draft a Markdown changelog from commit subjects, grouped by Conventional
# Commit type. Usage: changelog-from-git.sh [REVISION_RANGE]
# Default range: from the latest tag to HEAD (all history when there is no tag).
set -euo pipefail

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "error: not inside a git work tree" >&2
  exit 1
fi

range="${1:-}"
if [[ -z "$range" ]]; then
  if last_tag=$(git describe --tags --abbrev=0 2>/dev/null); then
    range="${last_tag}..HEAD"
  else
    range="HEAD"
  fi
fi

# Short hashes of commits whose message declares a breaking change.
breaking=$(git log --no-merges --format='%h' -E --grep='^BREAKING[ -]CHANGE' "$range" | tr '\n' ' ')

git log --no-merges --reverse --format='%h%x09%s' "$range" |
  awk -F'\t' -v breaking=" $breaking " '
    BEGIN {
      n = split("feat fix perf refactor docs test build ci chore other", order, " ")
      title["feat"] = "Features";        title["fix"] = "Bug fixes"
      title["perf"] = "Performance";     title["refactor"] = "Refactoring"
      title["docs"] = "Documentation";   title["test"] = "Tests"
      title["build"] = "Build";          title["ci"] = "Continuous integration"
      title["chore"] = "Maintenance";    title["other"] = "Other changes"
    }
    {
      sha = $1; subject = $2; type = "other"; scope = ""; text = subject; bang = 0
      if (match(subject, /^[a-z]+(\([^)]*\))?!?: /)) {
        head = substr(subject, 1, RLENGTH - 2)
        text = substr(subject, RLENGTH + 1)
        if (head ~ /!$/) { bang = 1; head = substr(head, 1, length(head) - 1) }
        if (match(head, /\(.*\)/)) {
          scope = substr(head, RSTART + 1, RLENGTH - 2)
          head = substr(head, 1, RSTART - 1)
        }
        type = (head in title) ? head : "other"
        if (type == "other") text = subject
      }
      line = "- " (scope != "" ? "**" scope ":** " : "") text " (" sha ")"
      if (bang || index(breaking, " " sha " ")) { brk[++nb] = line }
      items[type] = items[type] line "\n"
      count++
    }
    END {
      if (count == 0) { print "_No changes in this range._"; exit }
      if (nb > 0) {
        print "### Breaking changes\n"
        for (i = 1; i <= nb; i++) print brk[i]
        print ""
      }
      for (i = 1; i <= n; i++) {
        t = order[i]
        if (t in items) { printf "### %s\n\n%s\n", title[t], items[t] }
      }
    }'
