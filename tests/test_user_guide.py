"""The README a newcomer reads and the user guide under docs/ (built by MkDocs from mkdocs.yml).

The guide is built with `mkdocs build --strict` in a child process: any warning (a broken link or anchor,
a page missing from the nav, a missing image) fails it. Links are also checked the way GitHub resolves
them, since the README and the guide are read there too: every relative link and image of README.md and
docs/**/*.md must name a file of the repository, and an anchor into a Markdown file one of its headings.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

SETUP_AND_LAUNCH = "bash .ci/setup.sh && .venv/bin/nmt-desktop"
MAX_README_LINES = 250

# [text](target) and ![alt](target "title"); code spans and code blocks are removed before matching
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _prose(markdown: str) -> str:
    """The Markdown without fenced code, indented code blocks and code spans (links there are not links)."""
    markdown = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    markdown = re.sub(r"^(?: {4}|\t).*$", "", markdown, flags=re.M)
    return re.sub(r"`[^`\n]*`", "", markdown)


def _code_blocks(markdown: str) -> list[str]:
    """Indented code blocks, in order, each as its lines joined (4 spaces of indent removed)."""
    blocks, current = [], []
    for line in markdown.splitlines():
        if line.startswith("    ") and line.strip():
            current.append(line[4:])
        elif current and line.strip():
            blocks.append("\n".join(current))
            current = []
    if current:
        blocks.append("\n".join(current))
    return blocks


def _github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation dropped (but - and _), spaces as -."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())  # a link's text
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def _anchors(markdown_file: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", markdown_file.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {_github_anchor(m.group(1)) for m in re.finditer(r"^#{1,6} +(.+?) *#*$", text, flags=re.M)}


def _broken_links(markdown_file: Path) -> list[str]:
    """The relative links and images of a Markdown file that name no file (or no heading) of the repository."""
    broken = []
    for target in _LINK.findall(_prose(markdown_file.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        resolved = (markdown_file.parent / path).resolve() if path else markdown_file
        where = f"{markdown_file.relative_to(ROOT)}: {target}"
        if target.startswith("/") or not resolved.is_relative_to(ROOT):
            broken.append(f"{where} (absolute or outside the repository)")
        elif not resolved.exists():
            broken.append(f"{where} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{where} (no such heading)")
    return broken


def test_user_guide_builds_with_mkdocs_in_strict_mode_without_a_warning(tmp_path):
    site = tmp_path / "site"
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", NO_COLOR="1")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
                           "--site-dir", str(site)], cwd=ROOT, env=env, capture_output=True, text=True)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "WARNING" not in output, output
    assert (site / "index.html").is_file() and (site / "guide" / "index.html").is_file()
    assert (site / "ARCHITECTURE" / "index.html").is_file()
    # the screenshots the pages show are in the site too (copied by docs/repo_files.py)
    assert (site / "repo" / "resources" / "screenshots" / "translate.png").is_file()


def test_every_guide_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert pages and [p for p in pages if f": {p}\n" not in nav] == []


def test_readme_starts_with_the_setup_and_launch_command_then_the_test_command_ci_runs():
    readme = README.read_text(encoding="utf-8")
    start = readme.split("\n## ", 2)
    quick_start = "\n## ".join(start[:2])  # the title, its paragraph and the first section
    blocks = _code_blocks(quick_start)
    assert blocks[:1] == [SETUP_AND_LAUNCH], blocks
    ci_run = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
              if line.strip() and not line.startswith("#") and not line.startswith(("set ", "cd "))]
    assert len(blocks) >= 2 and blocks[1] == ci_run[-1], (blocks, ci_run)
    assert blocks[1].startswith("bash .ci/setup.sh && .venv/bin/python -m pytest")
    assert "CI runs `.ci/run`, which runs exactly the test command above." in quick_start


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines: move the detail into docs/guide/"


def test_readme_links_and_images_resolve_to_files_of_the_repository():
    readme = README.read_text(encoding="utf-8")
    assert _LINK.search(_prose(readme)), "README.md links nowhere"
    assert _broken_links(README) == []
    assert "docs/guide/index.md" in readme


def test_guide_links_resolve_on_github_too():
    pages = sorted(DOCS.rglob("*.md"))
    assert [broken for page in pages for broken in _broken_links(page)] == []
