"""The import format reference and its example files, served from ``docs/`` (one source of truth: the
same Markdown is read on GitHub, on the console's upload page and under /help/)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.conf import settings

from concord.errors import NotFound

FORMAT_DOC = "import-format.md"
EXAMPLES_DIR = "import-examples"
# The downloadable examples: one per preset (and the CSV form of the first), in the order shown.
EXAMPLES = ("astrid.jsonl", "astrid.csv", "plainfact.jsonl", "icat.jsonl", "pubhealth.jsonl", "kqa.jsonl",
            "begin.jsonl")


def docs_dir() -> Path:
    return Path(settings.BASE_DIR) / "docs"


@lru_cache(maxsize=1)
def format_reference() -> str:
    """The Markdown of docs/import-format.md."""
    return (docs_dir() / FORMAT_DOC).read_text(encoding="utf-8")


def example_bytes(name: str) -> bytes:
    """One example file by name; only the listed names are served (no path is ever built from input)."""
    if name not in EXAMPLES:
        raise NotFound(f"there is no example file {name!r}")
    return (docs_dir() / EXAMPLES_DIR / name).read_bytes()
