#!/usr/bin/env bash
# Runs every fuzz target for $SECS seconds (default 300), two at a time, niced,
# and keeps each run's libFuzzer log in fuzz/logs/<target>.log.
set -u
cd "$(dirname "$0")"
SECS=${SECS:-300}
TARGETS=${*:-frontmatter validate_skill_md fuzzy_patch paths hub_unpack sse_stream guard_scan}
mkdir -p logs
python3 seed.py >/dev/null
cargo +nightly fuzz build -s none -O -a >/dev/null 2>&1 || { echo "build failed"; exit 1; }
run() {
    nice -n 10 cargo +nightly fuzz run -s none -O -a "$1" -- \
        -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        >"logs/$1.log" 2>&1
    echo "$1 exit $?"
}
set -- $TARGETS
while [ $# -gt 0 ]; do
    run "$1" &
    if [ $# -gt 1 ]; then run "$2" & shift; fi
    shift
    wait
done
