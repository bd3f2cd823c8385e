#!/usr/bin/env python3
"""Checks the links of the user guide (docs/guide/src) and of the README: every relative link
names a file that is there, and every #anchor a heading of that file (ids made as mdBook makes
them). External links (http, https, mailto) are not followed: the machine may not reach them.
Exit status 1, with each broken link named, when one is broken."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "guide" / "src"
LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)")


def heading_id(text: str) -> str:
    text = re.sub(r"`([^`]*)`", r"\1", text)
    return "".join(
        c.lower() if (c.isalnum() or c in "-_") else ("-" if c.isspace() else "")
        for c in text.strip()
    )


def prose(path: Path):
    """(line number, line) outside code fences."""
    fenced = False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def anchors(path: Path) -> set:
    return {
        heading_id(m.group(1))
        for _, line in prose(path)
        if (m := re.match(r"^#{1,6} (.*)$", line))
    }


def check(path: Path, problems: list):
    for number, line in prose(path):
        for match in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            target = match.group(2)
            if re.match(r"^(https?:|mailto:)", target):
                continue
            file, _, anchor = target.partition("#")
            linked = (path.parent / file).resolve() if file else path
            where = f"{path.relative_to(ROOT)}:{number}: {target}"
            if not linked.is_file():
                problems.append(f"{where}: no such file")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                problems.append(f"{where}: no heading #{anchor} in {linked.name}")


def main() -> int:
    problems = []
    pages = sorted(GUIDE.rglob("*.md"))
    for page in pages:
        check(page, problems)
    check(ROOT / "README.md", problems)
    listed = {
        (GUIDE / m.group(2)).resolve()
        for _, line in prose(GUIDE / "SUMMARY.md")
        for m in LINK.finditer(line)
    }
    for page in pages:
        if page.name != "SUMMARY.md" and page.resolve() not in listed:
            problems.append(f"{page.relative_to(ROOT)}: not in SUMMARY.md")
    for problem in problems:
        print(f"check-guide-links: {problem}", file=sys.stderr)
    print(f"guide links: {len(pages)} pages and the README checked, {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
