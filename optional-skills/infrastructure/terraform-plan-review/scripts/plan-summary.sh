#!/usr/bin/env bash
# Summarize a Terraform JSON plan: counts per action, then every destroy and
# replace with its reason, then other changes. Needs jq.
# Usage: plan-summary.sh PLAN.json   (from: terraform show -json tfplan > PLAN.json)
#        terraform show -json tfplan | plan-summary.sh -
set -euo pipefail

command -v jq >/dev/null || { echo "error: jq is required" >&2; exit 1; }
(( $# == 1 )) || { echo "usage: ${0##*/} PLAN.json|-" >&2; exit 2; }
input=$1
if [[ $input != "-" && ! -r $input ]]; then
  echo "error: cannot read $input" >&2
  exit 1
fi

jq -r '
  def kind: .change.actions
    | if . == ["delete","create"] or . == ["create","delete"] then "REPLACE"
      elif . == ["delete"] then "DESTROY"
      elif . == ["create"] then "create"
      elif . == ["update"] then "update"
      elif . == ["read"] then "read"
      else "no-op" end;
  if (type != "object") or (has("format_version") | not) then
    "error: not a JSON plan; create one with terraform show -json tfplan\n" | halt_error(1)
  else . end
  | [(.resource_changes // [])[] | select(.mode != "data") | {address, kind: kind,
      reason: (.action_reason // ""),
      paths: ((.change.replace_paths // []) | map(map(tostring) | join(".")) | join(", "))}]
  | . as $all
  | "plan: " + ([ "create", "update", "REPLACE", "DESTROY" ]
      | map(. as $k | "\($all | map(select(.kind == $k)) | length) \($k | ascii_downcase)")
      | join(", ")),
    (if any($all[]; .kind == "DESTROY" or .kind == "REPLACE") then
       "", "needs attention:",
       ($all[] | select(.kind == "DESTROY" or .kind == "REPLACE")
        | "  \(.kind)  \(.address)"
          + (if .reason != "" then "  (\(.reason))" else "" end)
          + (if .paths != "" then "  forced by: \(.paths)" else "" end))
     else "", "no destroys or replacements" end),
    (if any($all[]; .kind == "create" or .kind == "update") then
       "", "other changes:",
       ($all[] | select(.kind == "create" or .kind == "update") | "  \(.kind)  \(.address)")
     else empty end)
' "$input"
