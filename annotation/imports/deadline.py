"""The wall-clock budget of one import: ``IMPORT_MAX_SECONDS``, its check and its write together.

Every other cost of an import is bounded by the file (``IMPORT_MAX_BYTES``, ``IMPORT_MAX_LINES``); this
bounds what they do not: a file whose records are each cheap but many, a slow database, a loaded machine.
Both passes ask the deadline before each record, and a record source never runs long between two records
(blank lines are passed over in C, a line is at most the file), so an import past its budget stops within
a record of it. It is refused (413) with nothing written: the check pass writes nothing, and the write pass
runs in one transaction, which the refusal undoes.
"""

from __future__ import annotations

from collections.abc import Callable

from concord.errors import PayloadTooLarge


class Deadline:
    """``seconds`` from now by ``clock``, a monotonic clock in seconds (``time.monotonic``; tests pass their own
    and drive it)."""

    def __init__(self, *, seconds: float, clock: Callable[[], float], filename: str) -> None:
        self.seconds = seconds
        self.clock = clock
        self.filename = filename
        self.start = clock()

    def check(self, where: str, number: int | None) -> None:
        """Refuses the import once it has run longer than its budget; ``where`` and ``number`` say how far it got."""
        if self.clock() - self.start <= self.seconds:
            return
        location = where if number is None else f"{where} {number}"
        detail = {"location": location, "field": "file",
                  "reason": f"longer than {self.seconds:g} seconds (IMPORT_MAX_SECONDS)"}
        if number is not None:
            detail[where] = number
        raise PayloadTooLarge(
            f"{self.filename}: the import ran longer than {self.seconds:g} seconds (IMPORT_MAX_SECONDS) and was "
            f"stopped at {location}; nothing was imported. Split the file, or ask an administrator to raise "
            "IMPORT_MAX_SECONDS.",
            details=[detail],
        )
