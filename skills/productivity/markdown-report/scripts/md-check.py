#!/usr/bin/env python3
"""Check a Markdown document's structure, or print its table of contents.

Usage: md-check.py FILE.md          report problems, exit 1 if any
       md-check.py --toc FILE.md    print a linked table of contents
Checks: one H1, no skipped heading levels, relative links to files that
exist, #anchors that match a heading, leftover TODO/TBD and [PLACEHOLDER]s.
"""
import re
import sys
from pathlib import Path

HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE_RE = re.compile(r"^\s*(```|~~~)")
LINK_RE = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
IMAGE_RE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")
PLACEHOLDER_RE = re.compile(r"\b(TODO|TBD|FIXME)\b|\[[A-Z][A-Z0-9 _/-]{2,}\](?!\()")
INLINE_CODE_RE = re.compile(r"`[^`]*`")


def anchor(text, used):
    """GitHub-style anchor: lowercase, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[`*_~]|\[|\]\([^)]*\)", "", text).strip().lower()
    slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
    base, n = slug, used.get(slug, 0)
    if n:
        slug = f"{base}-{n}"
    used[base] = n + 1
    return slug


def scan(lines):
    """Yield (line_no, kind, payload) for headings and prose lines outside code fences."""
    fenced = None
    for no, line in enumerate(lines, 1):
        fence = FENCE_RE.match(line)
        if fence:
            if fenced is None:
                fenced = fence.group(1)
            elif fence.group(1) == fenced:
                fenced = None
            continue
        if fenced:
            continue
        heading = HEADING_RE.match(line)
        if heading:
            yield no, "heading", (len(heading.group(1)), heading.group(2))
        else:
            yield no, "text", line


def main(argv):
    args = [a for a in argv[1:] if a != "--toc"]
    if len(args) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path = Path(args[0])
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        print(f"error: {path}: {err}", file=sys.stderr)
        return 1

    items = list(scan(lines))
    used = {}
    headings = [(no, level, title, anchor(title, used))
                for no, kind, payload in items if kind == "heading"
                for level, title in [payload]]

    if "--toc" in argv:
        top = min((h[1] for h in headings), default=1)
        for _, level, title, slug in headings:
            if level == top and sum(1 for h in headings if h[1] == top) == 1:
                continue  # skip the single document title
            indent = "  " * max(0, level - top - 1)
            print(f"{indent}- [{title}](#{slug})")
        return 0

    problems = []
    h1 = [h for h in headings if h[1] == 1]
    if len(h1) != 1:
        problems.append((h1[1][0] if len(h1) > 1 else 1, f"expected one H1 title, found {len(h1)}"))
    previous = 0
    for no, level, title, _ in headings:
        if previous and level > previous + 1:
            problems.append((no, f"heading level jumps from H{previous} to H{level}: {title}"))
        previous = level
    anchors = {h[3] for h in headings}
    for no, kind, payload in items:
        if kind != "text":
            continue
        prose = INLINE_CODE_RE.sub("", payload)
        targets = [m.group(2) for m in LINK_RE.finditer(prose)] + IMAGE_RE.findall(prose)
        for target in targets:
            if not target:
                problems.append((no, "link with an empty target"))
            elif target.startswith("#"):
                if target[1:] not in anchors:
                    problems.append((no, f"no heading for anchor {target}"))
            elif not re.match(r"^[a-z][a-z0-9+.-]*:", target):
                file_part = target.split("#", 1)[0]
                if file_part and not (path.parent / file_part).exists():
                    problems.append((no, f"linked file not found: {file_part}"))
        for match in PLACEHOLDER_RE.finditer(prose):
            problems.append((no, f"unfinished placeholder: {match.group(0)}"))

    for no, message in sorted(problems):
        print(f"{path}:{no}: {message}")
    if not problems:
        print(f"{path}: ok ({len(headings)} headings)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
