#!/usr/bin/env bash
# Summarises fuzz/logs/<target>.log: executions, exec/s, final coverage and features, crashes.
cd "$(dirname "$0")"
printf '%-18s %10s %7s %6s %7s %7s %s\n' target execs exec/s cov ft corpus crashes
for log in logs/*.log; do
    t=$(basename "$log" .log)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
    crashes=$(ls "artifacts/$t" 2>/dev/null | wc -l)
    printf '%-18s %10s %7s %6s %7s %7s %s\n' "$t" "$execs" "$rate" "$cov" "$ft" "$corp" "$crashes"
done
