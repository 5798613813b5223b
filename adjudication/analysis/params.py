"""Parsing of the parameters shared by every report: bootstrap size and seed, ids.

Every number goes through ``concord.params`` (ASCII digits only, within bounds), so a Unicode digit or a
number thousands of digits long is refused with a 400 naming the parameter.
"""

from __future__ import annotations

from typing import Any

from concord.errors import ValidationFailed
from concord.params import MAX_INT, parse_id
from concord.params import parse_int as _parse_int

DEFAULT_BOOTSTRAP = 2000


MAX_BOOTSTRAP = 20000
MAX_SEED = MAX_INT  # numpy's generators take any non-negative seed; this one fits every column and file


def bootstrap_params(raw_n: Any, raw_seed: Any) -> tuple[int, int]:
    n = _parse_int(raw_n, name="n_boot", minimum=100, maximum=MAX_BOOTSTRAP, default=DEFAULT_BOOTSTRAP)
    seed = _parse_int(raw_seed, name="seed", minimum=0, maximum=MAX_SEED, default=0)
    return n, seed


def id_param(value: Any, message: str) -> int:
    """The id ``value`` names (``concord.params.parse_id``), or ValidationFailed with ``message``. Whether a
    row has that id, and may be seen, is the access helper's question (404)."""
    found = parse_id(value)
    if found is None:
        raise ValidationFailed(message)
    return found
