"""What a run hands a metric: stored sentences, chunks, accepted aspects and human relevance labels."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Aspect, AspectStatus, AssignmentStatus, Label, Sentence
from scoring import selectors
from tests import factories

pytestmark = pytest.mark.django_db


def _label(assignment, question, unit_key, value):
    return Label.objects.create(
        assignment=assignment,
        question=question,
        unit_key=unit_key,
        value=value,
        updated_by=assignment.annotator,
        updated_at=timezone.now(),
    )


def _annotators(study, pool, n):
    users = [factories.make_user(f"ann-{pool.name}-{i}") for i in range(n)]
    for user in users:
        factories.add_member(pool, user)
    return users


def test_item_inputs_carry_sentences_chunks_source_and_only_current_accepted_aspects(study):
    item = factories.make_item(
        study, "i1", answer="Take 0.5 mg daily. Hello!", source="Dr. Smith wrote it. It works.", scope_class="in_scope"
    )
    Sentence.objects.create(item=item, part="source", index=0, text="Dr. Smith wrote it.", start=0, end=19)
    factories.make_chunk(item, 2, "second")
    factories.make_chunk(item, 1, "first", document_id="doc-1", is_labelled_target=True)
    kept = Aspect.objects.create(item=item, text="dose", importance="nice_to_have")
    Aspect.objects.create(item=item, text="proposed", status=AspectStatus.PROPOSED)
    Aspect.objects.create(item=item, text="retired", retired_in_version=2)
    got = selectors.item_inputs([item.pk])[item.pk]
    assert got.id == "i1" and got.sentences == ["Take 0.5 mg daily.", "Hello!"]
    assert got.source_sentences == ["Dr. Smith wrote it."] and got.scope_class == "in_scope"
    assert [(c.rank, c.text, c.document_id, c.is_target, c.unit_key) for c in got.contexts] == [
        (1, "first", "doc-1", True, "c:1"),
        (2, "second", "", False, "c:2"),
    ]
    assert [(a.ref, a.text, a.importance) for a in got.aspects] == [(kept.pk, "dose", "nice_to_have")]
    assert got.human_relevant_ranks is None and got.sentence_kinds is None


def test_human_relevant_ranks_are_the_chunks_a_majority_of_submitted_labels_mark_as_supporting(study):
    question = factories.make_question(study, "supports_answer", scope="chunk")
    item = factories.make_item(study, "i1")
    for rank in (1, 2, 3):
        factories.make_chunk(item, rank, f"chunk {rank}")
    pool = factories.make_pool(study, "relevance", questions=[question])
    a, b, c = (
        factories.make_assignment(pool, item, user, status=AssignmentStatus.SUBMITTED)
        for user in _annotators(study, pool, 3)
    )
    for assignment, votes in ((a, ("yes", "yes", "no")), (b, ("yes", "no", "no")), (c, ("no", "yes", "yes"))):
        for rank, vote in enumerate(votes, start=1):
            _label(assignment, question, f"c:{rank}", vote)
    # Unsubmitted assignments do not count: with these two, c:3 would have 3 yes of 5.
    for name in ("drafting-1", "drafting-2"):
        user = factories.make_user(name)
        factories.add_member(pool, user)
        _label(factories.make_assignment(pool, item, user, status=AssignmentStatus.STARTED), question, "c:3", "yes")
    got = selectors.item_inputs([item.pk])[item.pk]
    assert got.human_relevant_ranks == [1, 2]  # c:3 has 1 yes of 3 submitted votes


def test_sentence_kinds_take_the_majority_and_leave_ties_undecided(study):
    question = factories.make_question(
        study,
        "sentence_kind",
        scope="sentence",
        kind="nominal",
        options=[
            {"value": "simplification", "label": "S", "key": "1"},
            {"value": "elaboration", "label": "E", "key": "2"},
        ],
    )
    item = factories.make_item(study, "i1", answer="One thing. Another thing.")
    pool = factories.make_pool(study, "kinds", questions=[question])
    a, b = (
        factories.make_assignment(pool, item, user, status=AssignmentStatus.SUBMITTED)
        for user in _annotators(study, pool, 2)
    )
    _label(a, question, "s:0", "simplification")
    _label(b, question, "s:0", "simplification")
    _label(a, question, "s:1", "simplification")
    _label(b, question, "s:1", "elaboration")
    got = selectors.item_inputs([item.pk])[item.pk]
    assert got.sentence_kinds == {0: "simplification"}


def test_item_inputs_use_a_constant_number_of_queries(study):
    ids = []
    for i in range(12):
        item = factories.make_item(study, f"i{i}")
        factories.make_chunk(item, 1, "context")
        ids.append(item.pk)
    with CaptureQueriesContext(connection) as few:
        selectors.item_inputs(ids[:2])
    with CaptureQueriesContext(connection) as many:
        selectors.item_inputs(ids)
    assert len(many) == len(few) <= 7
