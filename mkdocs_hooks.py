"""MkDocs hooks: pages of the site whose one source lies outside ``docs/``.

The home page is the README, the changelog is CHANGELOG.md, the benchmark page is
benchmarks/README.md and each shipped agent's card is ``parlour/models/NAME/card.md``;
they are added as generated pages, so nothing is copied into ``docs/`` to drift. Links
that work on the repository (``docs/x.md`` from the README, ``../parlour/models/NAME/
card.md`` from a docs page) are pointed at the site's pages.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parent
_CARD_LINK = re.compile(r"\]\(((?:\.\./)+)parlour/models/([^/)]+)/card\.md\)")


def _sources() -> dict[str, str]:
    """Site path -> Markdown of every generated page."""
    def read(*parts: str) -> str:
        return ROOT.joinpath(*parts).read_text(encoding="utf-8")

    pages = {
        "index.md": read("README.md").replace("](docs/", "]("),
        "changelog.md": read("CHANGELOG.md"),
        "benchmarks.md": read("benchmarks", "README.md"),
    }
    for card in sorted((ROOT / "parlour" / "models").glob("*/card.md")):
        pages[f"models/{card.parent.name}.md"] = read(*card.relative_to(ROOT).parts)
    return pages


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages."""
    for path, text in _sources().items():
        files.append(File.generated(config, path, content=text))
    return files


def on_page_markdown(
    markdown: str, page: Page, config: MkDocsConfig, files: Files
) -> str:
    """Point links to an agent card in the repository at the card's page."""
    here = posixpath.dirname(page.file.src_uri)

    def card(match: re.Match[str]) -> str:
        return f"]({posixpath.relpath(f'models/{match.group(2)}.md', here or '.')})"

    return _CARD_LINK.sub(card, markdown)
