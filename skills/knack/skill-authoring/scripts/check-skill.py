#!/usr/bin/env python3
"""Check one or more knack skill folders against the format rules.

Usage: check-skill.py SKILL_DIR [SKILL_DIR...]
Prints ERROR/WARN lines and exits 1 when any ERROR was found.
"""
import re
import sys
from pathlib import Path

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
SUPPORT_DIRS = {"references", "templates", "scripts", "assets"}
SECTIONS = ("## When to use", "## Procedure", "## Pitfalls", "## Verification")
SCRIPT_SUFFIXES = {".sh", ".bash", ".py", ".rb", ".pl"}
MAX_SKILL_CHARS = 100_000
MAX_FILE_BYTES = 1_048_576
# The skills index shows about this much of each description by default
# (skills.index_description_chars), cut at a word, preferring a 'Use when'
# sentence; past SOFT_DESCRIPTION descriptions are rarely read in full.
INDEX_BUDGET = 160
SOFT_DESCRIPTION = 500


def split_frontmatter(text):
    """Return (yaml_text, body) or raise ValueError with the reason."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        raise ValueError("SKILL.md must start with a '---' frontmatter line")
    match = re.search(r"\n---[ \t]*\r?\n", text[3:])
    if match is None:
        raise ValueError("frontmatter has no closing '---' line")
    return text[3:match.start() + 3], text[match.end() + 3:]


def parse_yaml(raw):
    """Parse with PyYAML when present, else read top-level key: value lines."""
    try:
        import yaml  # python3-yaml on Debian
    except ImportError:
        yaml = None
    if yaml is not None:
        try:
            data = yaml.safe_load(raw)
        except yaml.YAMLError as err:
            raise ValueError(f"frontmatter is not valid YAML: {err}") from None
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise ValueError("frontmatter must be a mapping of key: value pairs")
        return data
    data = {}
    for line in raw.splitlines():
        if line[:1] in (" ", "\t", "#") or ":" not in line:
            continue
        key, value = line.split(":", 1)
        data[key.strip()] = value.strip().strip("'\"")
    return data


def check(skill_dir):
    """Yield (level, message) pairs for one skill folder."""
    skill_md = skill_dir / "SKILL.md"
    if not skill_md.is_file():
        yield "ERROR", "no SKILL.md in this folder"
        return
    text = skill_md.read_text(encoding="utf-8", errors="replace")
    if len(text) > MAX_SKILL_CHARS:
        yield "ERROR", f"SKILL.md has {len(text):,} characters (limit {MAX_SKILL_CHARS:,})"
    try:
        raw, body = split_frontmatter(text)
        meta = parse_yaml(raw)
    except ValueError as err:
        yield "ERROR", str(err)
        return

    name = meta.get("name")
    if not name:
        yield "ERROR", "frontmatter has no 'name'"
    else:
        name = str(name)
        if len(name) > 64:
            yield "ERROR", f"name is {len(name)} characters (limit 64)"
        if not NAME_RE.match(name):
            yield "ERROR", f"name {name!r} must match {NAME_RE.pattern}"
        folder = skill_dir.resolve().name
        if name != folder:
            yield "WARN", f"name {name!r} differs from folder {folder!r}"

    desc = meta.get("description")
    if not desc:
        yield "ERROR", "frontmatter has no 'description'"
    else:
        desc = str(desc).strip()
        if len(desc) > 1024:
            yield "ERROR", f"description is {len(desc)} characters (limit 1024)"
        elif len(desc) > SOFT_DESCRIPTION:
            yield "WARN", f"description is {len(desc)} characters; past {SOFT_DESCRIPTION} it is rarely read in full"
        elif len(desc) > INDEX_BUDGET and not re.search(r"\buse (it )?when\b", desc, re.IGNORECASE):
            yield "WARN", (f"description is {len(desc)} characters and the index shows about {INDEX_BUDGET}; "
                           "add a 'Use when ...' sentence so the index keeps the trigger")
        if not desc.startswith("Use when"):
            yield "WARN", "description should start with 'Use when'"

    if not body.strip():
        yield "ERROR", "body is empty"
    for section in SECTIONS:
        if not re.search(rf"^{re.escape(section)}\s*$", body, re.MULTILINE):
            yield "WARN", f"missing section '{section}'"
    lines = body.count("\n")
    if lines > 200:
        yield "WARN", f"body has {lines} lines; consider moving detail to references/"

    root = skill_dir.resolve()
    for path in sorted(skill_dir.rglob("*")):
        rel = path.relative_to(skill_dir)
        if path == skill_md or path.is_dir():
            continue
        if path.is_symlink() and root not in path.resolve().parents:
            yield "ERROR", f"{rel}: symlink points outside the skill"
            continue
        if rel.parts[0] not in SUPPORT_DIRS:
            yield "ERROR", f"{rel}: support files belong under {', '.join(sorted(SUPPORT_DIRS))}"
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            yield "ERROR", f"{rel}: {size:,} bytes (limit {MAX_FILE_BYTES:,})"
        executable = bool(path.stat().st_mode & 0o111)
        if rel.parts[0] == "scripts" and not executable:
            yield "WARN", f"{rel}: script is not executable (chmod +x)"
        if executable and path.suffix not in SCRIPT_SUFFIXES:
            yield "WARN", f"{rel}: executable bit on a file that is not a script"
        if path.suffix in (".sh", ".bash") and "set -euo pipefail" not in path.read_text(errors="replace"):
            yield "WARN", f"{rel}: bash script without 'set -euo pipefail'"


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 2
    errors = 0
    for arg in argv[1:]:
        skill_dir = Path(arg)
        if skill_dir.name == "SKILL.md":
            skill_dir = skill_dir.parent
        findings = list(check(skill_dir))
        for level, message in findings:
            print(f"{level} {skill_dir}: {message}")
            errors += level == "ERROR"
        if not findings:
            print(f"OK {skill_dir}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
