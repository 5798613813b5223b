"""The workspace and the importer agree on answers: fed the same value for a question of any kind, both
accept it or both refuse it, and when they accept it they store the same normalised value."""

from __future__ import annotations

import io
import itertools
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation import answers, labels
from annotation.imports import ImportRejected, items_import
from annotation.models import Label, LabelHistory
from concord.errors import ValidationFailed
from tests import factories

pytestmark = pytest.mark.django_db

ANSWER = "Take 0.5 mg daily. Eat with food. Call us if it hurts."
OPTIONS = {
    "binary": ["yes", "no"],
    "nominal": ["supported", "contradicted", "unclear"],
    "ordinal": ["1", "2", "3", "4", "5"],
    "multilabel": ["claim", "hedge", "advice"],
}
_ids = itertools.count(1)


@pytest.fixture
def setup(study, annotator):
    questions = {}
    for kind in answers.KINDS:
        extra: dict[str, Any] = {"options": [{"value": v, "label": v.title()} for v in OPTIONS.get(kind, [])]}
        if kind == "number":
            extra.update(min_value=0, max_value=10)
        questions[kind] = factories.make_question(study, f"q_{kind}", kind=kind, **extra)
    item = factories.make_item(study, "workspace-item", answer=ANSWER)
    pool = factories.make_pool(study, "workspace", questions=list(questions.values()))
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    return {"study": study, "questions": questions, "assignment": assignment, "annotator": annotator}


json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**53), 2**53), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=8,
)
padded = st.sampled_from(["", " ", "  ", "\t", "\n"])


def _options(kind: str) -> st.SearchStrategy:
    option = st.sampled_from(OPTIONS[kind])
    near = st.one_of(option, st.tuples(padded, option, padded).map("".join), option.map(str.upper))
    if kind == "ordinal":
        near = st.one_of(near, st.integers(0, 6), st.floats(0, 6, allow_nan=False))
    if kind == "multilabel":
        return st.one_of(st.lists(near, max_size=5), near)
    return near


def _values(kind: str) -> st.SearchStrategy:
    """Values near the edges of what ``kind`` accepts, and anything JSON can carry."""
    if kind in OPTIONS:
        near = _options(kind)
    elif kind == "alignment":
        index = st.one_of(st.integers(-2, 5), st.integers(0, 4).map(str), st.just(True), st.floats(0, 3))
        near = st.lists(index, max_size=5)
    elif kind == "text":
        near = st.one_of(
            st.text(max_size=20), st.tuples(padded, st.text(max_size=5), padded).map("".join),
            st.integers(answers.MAX_TEXT_LENGTH - 2, answers.MAX_TEXT_LENGTH + 2).map(lambda n: " " + "x" * n),
            st.just("a\x00b"),
        )
    else:  # number
        near = st.one_of(
            st.integers(-2, 12), st.floats(-1, 11, allow_nan=False), st.sampled_from([0, 10, 0.0, 10.0, "3", "2.5"]),
        )
    return st.one_of(near, json_values)


def _workspace(setup, kind: str, value: Any) -> tuple[bool, Any]:
    question, assignment = setup["questions"][kind], setup["assignment"]
    # Each value is a first answer, as in an import (a retry of an equal value would keep the stored one).
    previous = Label.objects.filter(assignment=assignment, question=question)
    LabelHistory.objects.filter(label__in=previous).delete()
    previous.delete()
    try:
        label = labels.label_save(
            assignment=assignment, question=question, unit_key="item", value=value, base_version=0,
            actor=setup["annotator"],
        )
    except ValidationFailed:
        return False, None
    return True, Label.objects.get(pk=label.pk).value


def _importer(setup, kind: str, value: Any) -> tuple[bool, Any]:
    external_id = f"imported-{next(_ids)}"
    record = {
        "id": external_id, "question": "What dose?", "answer": ANSWER,
        "labels": [{"annotator": "A", "question": f"q_{kind}", "unit": "item", "value": value}],
    }
    file = io.BytesIO((json.dumps(record) + "\n").encode())
    try:
        items_import(study=setup["study"], file=file, filename="labels.jsonl")
    except ImportRejected:
        return False, None
    return True, Label.objects.get(assignment__item__external_id=external_id, question__key=f"q_{kind}").value


@pytest.mark.parametrize("kind", answers.KINDS)
def test_the_workspace_and_the_importer_accept_refuse_and_store_answers_alike(setup, kind):
    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(value=_values(kind))
    def check(value):
        workspace = _workspace(setup, kind, value)
        imported = _importer(setup, kind, value)
        assert workspace[0] == imported[0], f"workspace accepts: {workspace[0]}, importer accepts: {imported[0]}"
        assert workspace[1] == imported[1]
        assert type(workspace[1]) is type(imported[1])

    check()
