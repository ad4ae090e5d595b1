#!/usr/bin/env bash
# End-to-end check of the TUI in a real terminal (tmux): ask a question and see
# the streamed answer, invoke a skill with /name, interrupt a slow answer with
# ctrl-c, quit with ctrl-d, and check that knack exited cleanly.
#
# The model is the scripted mock server from crates/test-support. Needs tmux;
# without it the script prints "SKIP: ..." and exits 0. Run from anywhere:
#   bash tests/tui/tmux_e2e.sh
set -euo pipefail

if ! command -v tmux >/dev/null 2>&1; then
    echo "SKIP: tmux is not installed"
    exit 0
fi

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
cargo build --quiet -p knack -p test-support --bins
target="${CARGO_TARGET_DIR:-$repo/target}/debug"

work="$(mktemp -d)"
session="knack-e2e-$$"
server_pid=""
cleanup() {
    tmux kill-session -t "$session" 2>/dev/null || true
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

home="$work/home"
mkdir -p "$home/skills/demo/greet-user" "$work/cwd"
cat > "$home/skills/demo/greet-user/SKILL.md" <<'SKILL'
---
name: greet-user
description: Use when the user wants a friendly greeting
---
# Greet the user

Say hello warmly and mention the skill by name.
SKILL

# One reply per model request, in order: the question, the skill turn, and a
# slow answer that the test interrupts.
cat > "$work/script.json" <<'JSON'
[
  {"text": "The capital of France is **Paris**.",
   "usage": {"prompt_tokens": 900, "completion_tokens": 9, "cached_tokens": 600}},
  {"text": "Hello from the greet-user skill!",
   "usage": {"prompt_tokens": 1200, "completion_tokens": 7, "cached_tokens": 900}},
  {"text": "Once upon a time there was a very long story that kept going and going and going and going and going.",
   "chunk_delay_ms": 400}
]
JSON

"$target/mock-model-server" "$work/script.json" --request-log "$work/requests.jsonl" > "$work/url" 2> "$work/server.log" &
server_pid=$!
for _ in $(seq 1 50); do
    [ -s "$work/url" ] && break
    sleep 0.1
done
base_url="$(head -n 1 "$work/url")"
[ -n "$base_url" ] || { echo "FAIL: the mock server printed no URL"; cat "$work/server.log"; exit 1; }

tmux new-session -d -s "$session" -x 110 -y 32 -c "$work/cwd" \
    "env -u NO_COLOR KNACK_HOME='$home' KNACK_BUNDLED_SKILLS='$work/cwd' KNACK_BASE_URL='$base_url' \
     KNACK_MODEL=mock-model KNACK_API_KEY=test-key '$target/knack' chat; echo \"knack exited with \$?\"; sleep 30"

screen() { tmux capture-pane -p -t "$session"; }

# wait_for TEXT [SECONDS]: polls the pane until TEXT shows up.
wait_for() {
    local text="$1" limit="${2:-10}" i
    for i in $(seq 1 $((limit * 10))); do
        if screen | grep -qF -- "$text"; then return 0; fi
        sleep 0.1
    done
    echo "FAIL: did not see '$text' within ${limit}s; the pane shows:"
    screen
    exit 1
}

wait_for "mock-model"
tmux send-keys -t "$session" -l "What is the capital of France?"
tmux send-keys -t "$session" Enter
wait_for "The capital of France is Paris."
wait_for "cache"

tmux send-keys -t "$session" -l "/greet-user please"
tmux send-keys -t "$session" Enter
wait_for "Hello from the greet-user skill!"
# The skill body went to the model as a user message, never into the system prompt.
python3 - "$work/requests.jsonl" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
chats = [r for r in reqs if r.get("path", "").endswith("/chat/completions")]
body = chats[1]["body"]
msgs = body["messages"]
assert "Say hello warmly" not in msgs[0]["content"], "skill body leaked into the system prompt"
assert any(m["role"] == "user" and "Say hello warmly" in (m.get("content") or "") for m in msgs), "skill body missing"
assert chats[0]["body"]["messages"][0] == msgs[0], "system prompt changed within the session"
PY

tmux send-keys -t "$session" -l "Tell me a long story"
tmux send-keys -t "$session" Enter
wait_for "Once upon"
tmux send-keys -t "$session" C-c
wait_for "turn interrupted"

tmux send-keys -t "$session" C-d
wait_for "knack exited with 0"
echo "ok: tmux end-to-end (question, /skill, interrupt, quit)"
