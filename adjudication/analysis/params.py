"""Parsing of the parameters shared by every report: bootstrap size and seed, whole numbers."""

from __future__ import annotations

from typing import Any

from concord.errors import ValidationFailed

DEFAULT_BOOTSTRAP = 2000


MAX_BOOTSTRAP = 20000


def bootstrap_params(raw_n: Any, raw_seed: Any) -> tuple[int, int]:
    try:
        n = int(raw_n) if raw_n not in (None, "") else DEFAULT_BOOTSTRAP
        seed = int(raw_seed) if raw_seed not in (None, "") else 0
    except (TypeError, ValueError):
        raise ValidationFailed("n_boot and seed must be whole numbers") from None
    if not 100 <= n <= MAX_BOOTSTRAP:
        raise ValidationFailed(f"n_boot must be between 100 and {MAX_BOOTSTRAP}")
    return n, seed


def parse_int(value: Any, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValidationFailed(f"{name} must be a whole number") from None
