"""MkDocs hook: the guide's relative links to files of the repository outside docs/ (screenshots, benchmarks/RESULTS.md).

The pages link to such files relatively (`../../resources/screenshots/translate.png`), so the links work
for a reader of the repository on GitHub. MkDocs only knows the files inside docs/ and would report each
such link as not found; this hook adds every linked file that exists (and only those) to the site, under
`repo/<path>`, so `mkdocs build --strict` still fails on a link to a file that is not there.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File, InclusionLevel

# Markdown inline links and images: [text](target) / ![alt](target "title")
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


class _RepoFile(File):
    """A file of the repository outside docs/, copied as it is (a .md file is not rendered as a page)."""

    def is_documentation_page(self) -> bool:
        return False

    def is_static_page(self) -> bool:
        return False


def on_files(files, config):
    docs = Path(config.docs_dir).resolve()
    root = docs.parent
    for page in files.documentation_pages():
        text = Path(page.abs_src_path).read_text(encoding="utf-8")
        for target in _LINK.findall(text):
            if re.match(r"^[a-z][a-z0-9+.-]*:|^/|^#", target, re.I):  # external, absolute or same-page
                continue
            path = target.split("#", 1)[0].split("?", 1)[0]
            uri = posixpath.normpath(posixpath.join(posixpath.dirname(page.src_uri), path))
            if not uri.startswith("../") or files.get_file_from_path(uri) is not None:
                continue
            source = (docs / uri).resolve()
            if not source.is_file() or not source.is_relative_to(root):
                continue  # left to MkDocs, which reports it as not found
            # included explicitly: the default exclusion of names starting with "." would match "../"
            repo_file = _RepoFile.generated(config, uri, abs_src_path=str(source), inclusion=InclusionLevel.INCLUDED)
            repo_file.dest_uri = "repo/" + source.relative_to(root).as_posix()
            files.append(repo_file)
    return files
