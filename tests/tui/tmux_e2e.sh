#!/usr/bin/env bash
# End-to-end check of the TUI in a real terminal (tmux): ask a question and see
# the streamed answer, invoke a skill with /name, interrupt a slow answer with
# ctrl-c, survive /resume with a bad id, start over with /new and come back
# through the /resume picker, switch the model with /model, attach a file with
# @path (completed with tab), answer a skill's masked secret prompt, scroll
# /help on an 80x24 terminal, quit with ctrl-d, and check that knack exited
# cleanly and that the model received what it should. Then: typing ahead into an
# approval modal never answers it, an edit's card shows its diff, /undo restores;
# ctrl-d with a draft keeps it, a message sent while an answer streams waits its turn, esc
# interrupts, the /skills browser puts the skill named as typed first, and
# quitting prints the session's totals and how to resume it.
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

# One reply per model request, in order: the question, the skill turn, a
# slow answer that the test interrupts, the turn after /model, the @file turn,
# the turn of the skill whose secret the masked prompt asked for.
cat > "$work/script.json" <<'JSON'
[
  {"text": "The capital of France is **Paris**.",
   "usage": {"prompt_tokens": 900, "completion_tokens": 9, "cached_tokens": 600}},
  {"text": "Hello from the greet-user skill!",
   "usage": {"prompt_tokens": 1200, "completion_tokens": 7, "cached_tokens": 900}},
  {"text": "Once upon a time there was a very long story that kept going and going and going and going and going.",
   "chunk_delay_ms": 400},
  {"text": "This is the other model speaking."},
  {"text": "Your notes have two lines."},
  {"text": "The forecast is ready."}
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

# close_with_escape TEXT: presses Esc, one at a time (at most 5), until TEXT is gone.
close_with_escape() {
    local text="$1" tries i
    for tries in 1 2 3 4 5; do
        tmux send-keys -t "$session" Escape
        for i in $(seq 1 10); do
            if ! screen | grep -qF -- "$text"; then return 0; fi
            sleep 0.1
        done
    done
    echo "FAIL: '$text' was still shown after 5 presses of Esc; the pane shows:"
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

# /resume with an id that names no session: an error line, and the UI stays.
tmux send-keys -t "$session" -l "/resume no-such-session"
tmux send-keys -t "$session" Enter
wait_for "no session with id 'no-such-session'"
tmux send-keys -t "$session" C-u

# /new starts an empty session; /resume alone opens the picker, typing filters
# it, and Enter brings the first conversation back on screen.
tmux send-keys -t "$session" -l "/new"
tmux send-keys -t "$session" Enter
wait_for "Type a message and press enter"
if screen | grep -qF "The capital of France is Paris."; then
    echo "FAIL: /new kept the old transcript"; screen; exit 1
fi
tmux send-keys -t "$session" -l "/resume"
tmux send-keys -t "$session" Enter
wait_for "resume a session (2 of 2)"
tmux send-keys -t "$session" -l "capital"
wait_for "resume a session (1 of 2)"
tmux send-keys -t "$session" Enter
wait_for "resumed session"
wait_for "The capital of France is Paris."

# /model switches the following requests and the status line says so.
tmux send-keys -t "$session" -l "/model other-model"
tmux send-keys -t "$session" Enter
wait_for "model switched to other-model"
wait_for " other-model │"
tmux send-keys -t "$session" -l "Which model is this?"
tmux send-keys -t "$session" Enter
wait_for "This is the other model speaking."

# @ completes a file of the working directory; its text goes with the message.
printf 'alpha line\nbeta line\n' > "$work/cwd/notes.txt"
tmux send-keys -t "$session" -l "Summarise @no"
wait_for "@notes.txt"
tmux send-keys -t "$session" Tab
wait_for "Summarise @notes.txt"
tmux send-keys -t "$session" Enter
wait_for "attached notes.txt · 2 lines"
wait_for "Your notes have two lines."

python3 - "$work/requests.jsonl" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
chats = [r for r in reqs if r.get("path", "").endswith("/chat/completions")]
def last_user(req):
    return [m for m in req["body"]["messages"] if m["role"] == "user"][-1]["content"]
switched = [r for r in chats if last_user(r) == "Which model is this?"]
assert len(switched) == 1, "the turn after /model was not sent"
assert switched[0]["body"]["model"] == "other-model", switched[0]["body"]["model"]
assert chats[0]["body"]["model"] == "mock-model"
assert switched[0]["body"]["messages"][0] == chats[0]["body"]["messages"][0], \
    "the resumed, switched session changed its system prompt"
mentioned = [r for r in chats if last_user(r).startswith("Summarise @notes.txt")]
assert len(mentioned) == 1, "the @file turn was not sent"
text = last_user(mentioned[0])
assert "[Attached file: notes.txt · 2 lines]" in text, text
assert "alpha line\nbeta line\n</file>" in text, text
assert mentioned[0]["body"]["model"] == "other-model"
PY

# A skill that needs a secret: invoking it opens the masked prompt first; the
# typed value shows as dots, lands in .env (0600), and nowhere else.
mkdir -p "$home/skills/demo/forecast"
cat > "$home/skills/demo/forecast/SKILL.md" <<'SKILL'
---
name: forecast
description: Use when the user asks for a weather forecast
required_environment_variables:
  - name: SKILL_E2E_FORECAST_TOKEN
    prompt: Paste your forecast token
    help: Create one in the forecast service's settings.
---
# Forecast

Call the forecast API with the token.
SKILL
tmux send-keys -t "$session" -l "/reload-skills"
tmux send-keys -t "$session" Enter
wait_for "skills available"
secret="e2e-Zq81-secret-token"
tmux send-keys -t "$session" -l "/forecast for Oslo"
tmux send-keys -t "$session" Enter
wait_for "the skill forecast needs a secret"
wait_for "Paste your forecast token"
tmux send-keys -t "$session" -l "$secret"
wait_for "$(printf '•%.0s' $(seq 1 ${#secret}))"
if screen | grep -qF "$secret"; then
    echo "FAIL: the secret is visible on screen"; screen; exit 1
fi
tmux send-keys -t "$session" Enter
wait_for "saved SKILL_E2E_FORECAST_TOKEN to"
wait_for "The forecast is ready."
python3 - "$work" "$home" "$secret" <<'PY'
import json, os, stat, sys
work, home, secret = sys.argv[1:4]
env_path = os.path.join(home, ".env")
assert f"SKILL_E2E_FORECAST_TOKEN={secret}\n" in open(env_path).read(), "not saved to .env"
assert stat.S_IMODE(os.stat(env_path).st_mode) == 0o600, oct(os.stat(env_path).st_mode)
raw = open(os.path.join(work, "requests.jsonl")).read()
assert secret not in raw, "the secret was sent to the model"
reqs = [json.loads(l) for l in raw.splitlines() if l.strip()]
chats = [r for r in reqs if r.get("path", "").endswith("/chat/completions")]
invoked = [m["content"] for m in chats[-1]["body"]["messages"]
           if m["role"] == "user" and "Call the forecast API" in (m.get("content") or "")]
assert len(invoked) == 1, "the skill was not sent"
assert "Setup needed" not in invoked[0], "the saved variable still counted as missing"
leaks = []
for root, _, files in os.walk(home):
    for name in files:
        path = os.path.join(root, name)
        if path != env_path and secret.encode() in open(path, "rb").read():
            leaks.append(path)
assert not leaks, f"the secret is stored outside .env: {leaks}"
PY

tmux send-keys -t "$session" C-d
wait_for "knack exited with 0"

# ----- Ctrl-C mid-stream, then a new message: the roles still alternate -----
# The session above was switched with /model: the store says so too.
KNACK_HOME="$home" KNACK_BUNDLED_SKILLS="$work/cwd" "$target/knack" sessions list --json > "$work/sessions.json"
python3 - "$work/sessions.json" <<'PY'
import json, sys
sessions = json.load(open(sys.argv[1]))
first = [s for s in sessions if (s.get("title") or "").startswith("What is the capital")]
assert len(first) == 1, sessions
assert first[0]["model"] == "other-model", f"stored model is {first[0]['model']!r}, not the one /model chose"
PY

# A fresh mock whose first answer streams two pieces and then holds the
# stream open (stall_after_chunks): ctrl-c always lands mid-answer, however
# slow the machine. The next message must reach the model after one
# assistant message that keeps the streamed words and the interruption marker.
tmux kill-session -t "$session" 2>/dev/null || true
kill "$server_pid" 2>/dev/null || true
server_pid=""
cat > "$work/script-interrupt.json" <<'JSON'
[
  {"text": "Chapter one: the lighthouse keeper counted every ship that passed in the night.",
   "stall_after_chunks": 2},
  {"text": "A shorter story, as you asked."},
  {"text": "Part two begins slowly and never quite finishes its sentence.",
   "stall_after_chunks": 2},
  {"text": "The queued question gets its own answer."}
]
JSON
# Skills for the browser: the one named "weather" must come first although
# another, in an earlier category, mentions the weather in its description.
mkdir -p "$home/skills/aaa/decision-record" "$home/skills/weather/weather"
cat > "$home/skills/aaa/decision-record/SKILL.md" <<'SKILL'
---
name: decision-record
description: Use when recording a decision, even one about the weather
---
# Decision record
SKILL
cat > "$home/skills/weather/weather/SKILL.md" <<'SKILL'
---
name: weather
description: Use when the user asks about today's conditions
---
# Weather
SKILL
"$target/mock-model-server" "$work/script-interrupt.json" --request-log "$work/requests-interrupt.jsonl" \
    > "$work/url-interrupt" 2>> "$work/server.log" &
server_pid=$!
for _ in $(seq 1 50); do
    [ -s "$work/url-interrupt" ] && break
    sleep 0.1
done
base_url="$(head -n 1 "$work/url-interrupt")"
[ -n "$base_url" ] || { echo "FAIL: the second mock server printed no URL"; cat "$work/server.log"; exit 1; }
tmux new-session -d -s "$session" -x 110 -y 32 -c "$work/cwd" \
    "env -u NO_COLOR KNACK_HOME='$home' KNACK_BUNDLED_SKILLS='$work/cwd' KNACK_BASE_URL='$base_url' \
     KNACK_MODEL=mock-model KNACK_API_KEY=test-key '$target/knack' chat; echo \"knack exited with \$?\"; sleep 30"
wait_for "mock-model"
tmux send-keys -t "$session" -l "Tell me about the lighthouse"
tmux send-keys -t "$session" Enter
wait_for "Chapter one: the lighthouse"
tmux send-keys -t "$session" C-c
wait_for "turn interrupted"
tmux send-keys -t "$session" -l "Something shorter, please"
tmux send-keys -t "$session" Enter
wait_for "A shorter story, as you asked."
python3 - "$work/requests-interrupt.jsonl" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
chats = [r for r in reqs if r.get("path", "").endswith("/chat/completions")]
assert len(chats) == 2, f"expected 2 model requests, got {len(chats)}"
msgs = [m for m in chats[1]["body"]["messages"] if m["role"] != "system"]
roles = [m["role"] for m in msgs]
assert roles == ["user", "assistant", "user"], roles
assert msgs[0]["content"] == "Tell me about the lighthouse", msgs[0]["content"]
answer = msgs[1]["content"]
assert answer.startswith("Chapter one: the lighthouse"), answer
assert answer.endswith("[interrupted by the user]"), answer
assert "passed in the night" not in answer, "words the model never streamed were stored"
assert msgs[2]["content"] == "Something shorter, please", msgs[2]["content"]
PY

# Ctrl-D with a draft does not quit, and the draft stays.
tmux send-keys -t "$session" -l "a draft worth keeping"
tmux send-keys -t "$session" C-d
wait_for "ctrl-d quits from an empty input"
if screen | grep -qF "knack exited"; then
    echo "FAIL: ctrl-d quit with a draft in the input"; screen; exit 1
fi
wait_for "a draft worth keeping"
tmux send-keys -t "$session" C-u

# A message sent while the answer streams waits above the input, then runs
# after it; esc interrupts the stalled answer.
tmux send-keys -t "$session" -l "Go on with part two"
tmux send-keys -t "$session" Enter
wait_for "Part two begins"
tmux send-keys -t "$session" -l "And a queued question"
tmux send-keys -t "$session" Enter
wait_for "queued · And a queued question"
tmux send-keys -t "$session" Escape
wait_for "turn interrupted"
wait_for "The queued question gets its own answer."
if screen | grep -qF "queued ·"; then
    echo "FAIL: the queued line stayed after its turn ran"; screen; exit 1
fi
python3 - "$work/requests-interrupt.jsonl" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
chats = [r for r in reqs if r.get("path", "").endswith("/chat/completions")]
assert len(chats) == 4, f"expected 4 model requests, got {len(chats)}"
users = [m["content"] for m in chats[3]["body"]["messages"] if m["role"] == "user"]
assert users[-2:] == ["Go on with part two", "And a queued question"], users
PY

# The skills browser ranks like the palette: the exact name first.
tmux send-keys -t "$session" -l "/skills"
tmux send-keys -t "$session" Enter
wait_for "skills ("
tmux send-keys -t "$session" -l "weather"
wait_for "› weather"
# Esc clears the search, then closes the browser. One Esc at a time, each
# given time to land: Escs sent back to back (or an Esc followed at once by `/`)
# can reach the TUI as one Alt-key, which left the browser open to take the
# typed "/help" as a search.
close_with_escape "skills ("
# On an 80x24 terminal /help is taller than the screen: it scrolls to its
# last command instead of cutting the list off.
tmux resize-window -t "$session" -x 80 -y 24
tmux send-keys -t "$session" -l "/help"
tmux send-keys -t "$session" Enter
wait_for "pgup pgdn scroll"
tmux send-keys -t "$session" End
wait_for "/quit "
tmux send-keys -t "$session" Escape
tmux send-keys -t "$session" C-d
wait_for "knack exited with 0"
wait_for "resume it with: knack chat --resume"
echo "ok: tmux ctrl-d keeps a draft, a queued message waits its turn, esc interrupts, the browser ranks by name, the exit summary"

# ----- approvals a person can trust, visible edits, undo -----
# The model asks for a flagged command while the user is typing the next message
# at 8 keys a second: nothing answers the modal, every letter lands in the draft.
# After a pause, `n` denies (the safe choice). The next call rewrites notes.txt:
# its card shows the diff. /undo puts the file back.
tmux kill-session -t "$session" 2>/dev/null || true
kill "$server_pid" 2>/dev/null || true
server_pid=""
printf 'alpha line\nbeta line\n' > "$work/cwd/notes.txt"
cat > "$work/script-approvals.json" <<'JSON'
[
  {"tool_calls": [{"id": "t1", "name": "terminal", "arguments": "{\"command\": \"echo mkfs-demo\"}"}]},
  {"tool_calls": [{"id": "t2", "name": "write_file", "arguments": "{\"path\": \"notes.txt\", \"content\": \"alpha line\\nchanged line\\n\"}"}]},
  {"text": "Notes rewritten."}
]
JSON
"$target/mock-model-server" "$work/script-approvals.json" --request-log "$work/requests-approvals.jsonl" \
    > "$work/url-approvals" 2>> "$work/server.log" &
server_pid=$!
for _ in $(seq 1 50); do
    [ -s "$work/url-approvals" ] && break
    sleep 0.1
done
base_url="$(head -n 1 "$work/url-approvals")"
[ -n "$base_url" ] || { echo "FAIL: the third mock server printed no URL"; cat "$work/server.log"; exit 1; }
tmux new-session -d -s "$session" -x 110 -y 40 -c "$work/cwd" \
    "env -u NO_COLOR KNACK_HOME='$home' KNACK_BUNDLED_SKILLS='$work/cwd' KNACK_BASE_URL='$base_url' \
     KNACK_MODEL=mock-model KNACK_API_KEY=test-key '$target/knack' chat; echo \"knack exited with \$?\"; sleep 30"
wait_for "mock-model"
tmux send-keys -t "$session" -l "tidy the notes"
tmux send-keys -t "$session" Enter
wait_for "approval needed"
typed="yes always and again"
for (( i = 0; i < ${#typed}; i++ )); do
    tmux send-keys -t "$session" -l "${typed:i:1}"
    sleep 0.125
done
wait_for "$typed"
wait_for "approval needed"
sleep 1
tmux send-keys -t "$session" -l "n"
wait_for "Notes rewritten." 20
wait_for "+changed line"
wait_for "-beta line"
[ "$(cat "$work/cwd/notes.txt")" = "$(printf 'alpha line\nchanged line')" ] || { echo "FAIL: notes.txt was not rewritten"; exit 1; }
python3 - "$work/requests-approvals.jsonl" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
chats = [r for r in reqs if r.get("path", "").endswith("/chat/completions")]
tool = [m for m in chats[1]["body"]["messages"] if m["role"] == "tool"]
assert tool and "did not approve" in tool[-1]["content"], tool
PY
tmux send-keys -t "$session" C-u
tmux send-keys -t "$session" -l "/undo"
tmux send-keys -t "$session" Enter
wait_for "undid the turn"
[ "$(cat "$work/cwd/notes.txt")" = "$(printf 'alpha line\nbeta line')" ] || { echo "FAIL: /undo did not restore notes.txt"; cat "$work/cwd/notes.txt"; exit 1; }
tmux send-keys -t "$session" C-d
wait_for "knack exited with 0"
echo "ok: tmux approvals (typeahead at 8 keys/s never answers, n denies), edit diff on the card, /undo"

echo "ok: tmux ctrl-c mid-stream then a new message (roles alternate, stored model follows /model), /help scrolls at 80x24"
echo "ok: tmux end-to-end (question, /skill, interrupt, /resume, /new, picker, /model, @file, secret prompt, quit)"
