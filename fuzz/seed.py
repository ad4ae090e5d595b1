#!/usr/bin/env python3
"""Builds fuzz/corpus/<target>/ seeds from real files in the repository.

Run from anywhere: python3 fuzz/seed.py. The corpus folder is git-ignored;
libFuzzer grows it further while it runs.
"""
import hashlib
import io
import json
import os
import pathlib
import tarfile

FUZZ = pathlib.Path(__file__).resolve().parent
REPO = FUZZ.parent
CORPUS = FUZZ / "corpus"
GUARD = REPO / "crates/skill-guard/tests/corpus"


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def text_files(*roots):
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink() and path.stat().st_size < 64 * 1024:
                try:
                    yield path, path.read_text()
                except UnicodeDecodeError:
                    continue


skill_mds = [p for p in (REPO / "skills").rglob("SKILL.md")]
skill_mds += list((REPO / "optional-skills").rglob("SKILL.md"))
skill_mds += list(GUARD.rglob("SKILL.md"))
skill_dirs = sorted({p.parent for p in skill_mds})

for path in skill_mds:
    text = path.read_text()
    put("frontmatter", text)
    put("validate_skill_md", text)
    # fuzzy_patch: the file, one of its lines quoted loosely, a replacement.
    lines = [l for l in text.splitlines() if l.strip()]
    if len(lines) > 3:
        line = lines[len(lines) // 2]
        put("fuzzy_patch", b"\x00" + text.encode() + b"\xff" + line.strip().encode() + b"\xff" + b"replaced")
        block = "\n".join(l.strip() for l in lines[1:4])
        put("fuzzy_patch", b"\x01" + text.encode() + b"\xff" + block.encode() + b"\xff" + b"new block")

selectors = {".md": 0, ".sh": 1, ".py": 2}
for path, text in text_files(GUARD, REPO / "skills"):
    selector = selectors.get(path.suffix, 3)
    put("guard_scan", bytes([selector]) + text.encode())
    put("guard_scan", bytes([0x80 | selector]) + text.encode())

for skill in skill_dirs:
    for path in skill.rglob("*"):
        if path.is_file():
            put("paths", str(path.relative_to(skill)))
for p in ["references/ok.md", "references/out", "references/dir/secret.txt", "assets/etc/passwd",
          "../secret.txt", "references/../../secret.txt", "/etc/passwd", "references\\..\\x"]:
    put("paths", p)


def entries_for(skill):
    lines = []
    for path in sorted(skill.rglob("*")):
        rel = "s/" + str(path.relative_to(skill))
        if path.is_dir():
            lines.append(("d" + rel).encode())
        elif path.is_file():
            body = path.read_bytes()[:400].replace(b"\n", b" ").replace(b"\t", b" ")
            kind = "x" if os.access(path, os.X_OK) else "f"
            lines.append((kind + rel + "\t").encode() + body)
    return lines


for skill in skill_dirs[:40]:
    put("hub_unpack", b"\x00" + b"\n".join(entries_for(skill)))
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        tar.add(skill, arcname=skill.name)
    put("hub_unpack", b"\x01" + raw.getvalue())
put("hub_unpack", b"\x00ds\nfs/SKILL.md\t---\nls/scripts\t..\nls/up\t../x\nhs/hard\ts/SKILL.md\nps/pipe\t")
put("hub_unpack", b"\x00ds/a\nls/a/b\t..\nls/a/c\tb/..\nfs/ok\tx")
# The link chain that escaped before safe_tree refused links through links.
put("hub_unpack", b"\x00da\nla/b\t..\nla/c\tb/..\nfok\tx")


def sse(chunks, crlf=False):
    end = "\r\n" if crlf else "\n"
    return "".join(f"data: {json.dumps(c) if not isinstance(c, str) else c}{end}{end}" for c in chunks)


def chunk(delta, finish=None):
    return {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


streams = [
    sse([chunk({"role": "assistant", "content": "Hel"}), chunk({"content": "lo"}), chunk({}, "stop"), "[DONE]"]),
    sse([chunk({"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "skills_list", "arguments": ""}}]}),
         chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"ca"}}]}),
         chunk({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "skill_view", "arguments": {"name": "x"}}}]}),
         chunk({"tool_calls": [{"index": 0, "function": {"arguments": "t\":1}"}}]}),
         chunk({}, "tool_calls"), "[DONE]"], crlf=True),
    sse([chunk({"reasoning_content": "hmm"}), {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 2}}}, "[DONE]"]),
    sse(["{not json", chunk({"content": "ok"})]) + ": keep-alive\n\nevent: x\nid: 1\ndata: a\ndata: b\n\n",
    sse([{"error": {"message": "overloaded"}}]),
    sse([{"choices": [{"message": {"role": "assistant", "content": "whole", "tool_calls": [{"id": "x", "function": {"name": "a", "arguments": "{}"}}]}, "finish_reason": "tool_calls"}]}]),
]
for i, stream in enumerate(streams):
    put("sse_stream", bytes([i * 37 % 256]) + stream.encode())

for target in sorted(os.listdir(CORPUS)):
    print(target, len(os.listdir(CORPUS / target)))
