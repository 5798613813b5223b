"""A comparison of two reports (nested dicts and lists) that lets floats differ by rounding."""

from __future__ import annotations

from typing import Any

import pytest


def assert_close(got: Any, expected: Any, rel: float, path: str = "", *, abs: float = 1e-300) -> None:
    """Equal structure, equal strings, ints and None; floats equal to ``rel`` (or within ``abs``)."""
    if isinstance(expected, dict):
        assert list(got) == list(expected), path
        for key in expected:
            assert_close(got[key], expected[key], rel, f"{path}.{key}", abs=abs)
    elif isinstance(expected, list | tuple):
        assert len(got) == len(expected), path
        for i, (a, b) in enumerate(zip(got, expected, strict=True)):
            assert_close(a, b, rel, f"{path}[{i}]", abs=abs)
    elif isinstance(expected, float):
        assert isinstance(got, float), path
        assert got == pytest.approx(expected, rel=rel, abs=abs), path
    else:
        assert got == expected, path
        assert type(got) is type(expected), path
