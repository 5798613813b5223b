"""What one scoring task does before its per-item metric calls, and the timing line it logs: a batch's
texts reach the model in one call, each distinct text once; the line names where the batch's time went,
in the form bench/score_throughput.py reads to report the per-batch overhead."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import numpy as np
import pytest

from scoring import services
from scoring.metrics import AspectInput, ChunkInput, ItemInput
from scoring.models import RunStatus
from tests import factories
from tests.scoring.runs_support import eager_celery

ROOT = Path(__file__).resolve().parents[2]


class EncodingDouble:
    """A backend with an ``encode`` (as the embedding backend has) that records each call's texts."""

    name = "embedding"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.zeros((len(texts), 3), dtype=np.float32)


def _item(n: int, *, passage: str) -> ItemInput:
    return ItemInput(
        id=f"i{n}", question="What dose?", answer="", sentences=[f"Answer {n}.", "Thanks!"],
        contexts=[ChunkInput(rank=1, text=passage), ChunkInput(rank=2, text=f"Own passage {n}. It has two sentences.")],
        source_sentences=["Source sentence."], aspects=[AspectInput(ref=n, text=f"Aspect {n}")],
    )


def test_the_batchs_texts_reach_the_model_in_one_call_each_distinct_text_once():
    shared = "Metformin is first-line. The usual dose is 500 mg twice daily."
    backend = EncodingDouble()
    prepared = services.prepare_backend(backend, [_item(1, passage=shared), _item(2, passage=shared)])
    assert len(backend.calls) == 1
    (texts,) = backend.calls
    assert len(texts) == len(set(texts)) == prepared.texts
    assert set(texts) == {
        "Answer 1.", "Answer 2.", "Thanks!", "Source sentence.", "Aspect 1", "Aspect 2",
        # Passages are split into sentences as at import; a passage two items share is split and sent once.
        "Metformin is first-line.", "The usual dose is 500 mg twice daily.",
        "Own passage 1.", "Own passage 2.", "It has two sentences.",
    }
    assert prepared.split_seconds >= 0 and prepared.encode_seconds >= 0


def test_a_backend_without_encode_or_a_batch_without_items_gets_no_model_call():
    assert services.prepare_backend(object(), [_item(1, passage="A passage.")]) == services.Prepared()
    backend = EncodingDouble()
    assert services.prepare_backend(backend, []) == services.Prepared()
    assert backend.calls == []


def _bench_module():
    spec = importlib.util.spec_from_file_location("score_throughput", ROOT / "bench" / "score_throughput.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.django_db
def test_each_batch_logs_where_its_time_went_in_the_form_the_bench_reads(
    study, researcher, caplog, django_capture_on_commit_callbacks
):
    for i in range(5):
        item = factories.make_item(study, f"q{i}", answer="Metformin is the usual first-line drug. Hello there!")
        factories.make_chunk(item, 1, "Metformin is the usual first-line drug for type 2 diabetes.")
    caplog.set_level(logging.INFO, logger="scoring.services")
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        run = services.score_run_start(
            study=study, metric="probe", backend="lexical", parameters={}, actor=researcher, batch_size=2
        )
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("score batch ")]
    assert len(lines) == 3
    timings = _bench_module().batch_timings("\n".join(lines), run.pk)
    assert [t["items"] for t in timings] == [2.0, 2.0, 1.0]
    for t in timings:
        assert set(t) == {"claim", "load", "inputs", "split", "encode", "metric", "writes", "items"}
        assert all(seconds >= 0 for seconds in t.values())
        assert t["encode"] == 0.0  # the lexical backend has no model call to make ahead
    # Lines of another run are not counted.
    assert _bench_module().batch_timings("\n".join(lines), run.pk + 1) == []
