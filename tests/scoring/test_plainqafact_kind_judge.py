"""PlainQAFact's kind decision with a signal of its own: a ``kind`` judge trained from a study's gold of the
PlainFact ``sentence_kind`` question (learned backend, option ``kind_model``), and the offline form without one
saying which signal it used."""

from __future__ import annotations

import pytest

from adjudication.services import gold_set
from scoring.backends import get_backend
from scoring.judges import services
from scoring.metrics import ChunkInput, ItemInput, get_metric
from scoring.services import unit_key
from tests.factories import make_item, make_pool, make_question, make_study
from tests.scoring.judge_support import FACTS, UNRELATED, labelled_jsonl

pytestmark = pytest.mark.django_db

LEXICAL = {"feature_sets": ["lexical"], "folds": 3}
KIND_OPTIONS = [{"value": "simplification", "label": "Source simplification", "key": "1"},
                {"value": "elaboration", "label": "Elaborative explanation", "key": "2"}]


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


def _kind_study():
    """14 summaries: sentence 0 restates the source (gold: simplification), sentence 1 is about something else
    (gold: elaboration), on the sentence_kind question as the PlainFact preset names it."""
    study = make_study()
    question = make_question(study, "sentence_kind", scope="sentence", kind="single", options=KIND_OPTIONS)
    pool = make_pool(study, questions=[question])
    for i, ((fact, other), unrelated) in enumerate(zip(FACTS, UNRELATED, strict=True)):
        item = make_item(study, f"pf-{i:02d}", answer=f"{fact} {unrelated}", source=f"{fact} {other}.")
        for index, value in ((0, "simplification"), (1, "elaboration")):
            gold_set(pool_id=pool.pk, item_id=item.pk, unit_key=f"s:{index}", question_id=question.pk,
                     value=value, source="imported")
    return study


@pytest.fixture
def judges():
    study = _kind_study()
    kind = services.judge_train_from_study(study=study, question_key="sentence_kind", task="kind", name="kinds",
                                           actor=None, options=LEXICAL)
    supports = services.judge_train_from_file(content=labelled_jsonl(), filename="claims.jsonl", task="supports",
                                              name="claims", actor=None, options=LEXICAL)
    return kind, supports


def test_a_kind_judge_is_trained_from_the_sentence_kind_gold_with_simplification_as_the_positive(judges):
    kind, _ = judges
    assert (kind.task, kind.n, kind.n_positive, kind.source_positive) == ("kind", 28, 14, ["simplification"])
    backend = get_backend("learned", supports_model="claims", kind_model="kinds")
    source = ["Metformin lowers blood glucose in type 2 diabetes.", "Metformin is a first line drug for diabetes."]
    simp, elab = backend.sentence_kinds(["Metformin lowers blood glucose in type 2 diabetes.",
                                         "Penguins live mostly in the southern hemisphere."], source)
    assert (simp.details["kind"], elab.details["kind"]) == ("simplification", "elaboration")
    assert simp.details["signal"] == "trained kind judge 'kinds'"
    assert "kind=kinds" in backend.identity


def test_with_knowledge_none_and_a_kind_judge_the_value_is_rf_by_count_and_differs_with_weights(judges):
    # Source: two metformin facts. Sentences: s0, s1 restate them (kind judge: simplification; supports judge:
    # supported); s2 is off-source (elaboration; unsupported against the source). knowledge=none verifies
    # every sentence against the source alone, so by count (as the docs say) the value is supported /
    # classified = 2/3 — RF over the source, also 2/3. Equal weights give the mean of the kinds' scores:
    # (simplification 2/2 + explanation 0/1) / 2 = 1/2, where RF stays 2/3.
    source = ["Metformin lowers blood glucose in type 2 diabetes.", "Metformin is a first line drug for diabetes."]
    sentences = [*source, "Penguins live mostly in the southern hemisphere."]
    item = ItemInput(id="p", question="q", answer=" ".join(sentences), sentences=sentences,
                     source=" ".join(source), source_sentences=source,
                     contexts=[ChunkInput(rank=1, text=" ".join(source))])
    backend = get_backend("learned", supports_model="claims", kind_model="kinds")
    pqf, rf = get_metric("plainqafact"), get_metric("rf")
    by_count = {unit_key(s.unit): s for s in pqf.score(item, backend, pqf.resolve_params({"knowledge": "none"}))}
    details = by_count["item"].details
    assert [by_count[f"s:{i}"].details["kind"] for i in range(3)] == ["simplification", "simplification",
                                                                       "elaboration"]
    assert (details["simplification_score"], details["explanation_score"]) == (1.0, 0.0)
    assert details["kind_decision"]["by"] == "kind judge" and details["kind_decision"]["own_signal"] is True
    assert details["method"] == "kind-aware entailment (PlainQAFact-style, no LLM)"
    assert "RF with the source as the context" in details["note"]
    rf_value = rf.score(item, backend, rf.resolve_params({}))[0].value
    assert by_count["item"].value == pytest.approx(2 / 3) == pytest.approx(rf_value)
    weighted = pqf.score(item, backend, pqf.resolve_params(
        {"knowledge": "none", "weight_simplification": 1, "weight_elaboration": 1}))[0]
    assert weighted.value == pytest.approx(0.5)
    assert weighted.value != pytest.approx(rf_value)


def test_plainqafact_with_learned_but_no_kind_judge_is_refused_naming_the_option(judges):
    from scoring.backends.base import BackendCapabilityError

    item = ItemInput(id="p", question="q", answer="a b.", sentences=["Metformin lowers blood glucose."],
                     source="Metformin lowers blood glucose.")
    pqf = get_metric("plainqafact")
    with pytest.raises(BackendCapabilityError, match="kind_model"):
        pqf.score(item, get_backend("learned", supports_model="claims"), pqf.resolve_params({"knowledge": "none"}))


def test_without_a_kind_judge_the_offline_form_says_it_uses_the_verifiers_own_signal():
    # Lexical: "Paracetamol lowers fever." against "Paracetamol lowers fever in children." has unigram
    # precision 3/3, a simplification (>= 0.6) and supported (>= 0.5) by the same measure.
    name = "lexical"
    pqf = get_metric("plainqafact")
    item = ItemInput(id="p", question="", answer="Paracetamol lowers fever.", sentences=["Paracetamol lowers fever."],
                     source="Paracetamol lowers fever in children.")
    score = pqf.score(item, get_backend(name), pqf.resolve_params({"knowledge": "none"}))[0]
    decision = score.details["kind_decision"]
    assert decision["by"] == "backend similarity" and decision["own_signal"] is False
    assert "the same" in decision["signal"] and "kind_model" in decision["instead"]
    assert score.details["method"] == "kind-aware entailment (PlainQAFact-style, no LLM)"
    assert "unigram precision" in decision["signal"]
    assert (score.details["counts"]["simplification"], score.value) == (1, 1.0)
