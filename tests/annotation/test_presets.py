"""Protocol presets cover every label the protocol needs and combine without clashes."""

from __future__ import annotations

import itertools

import pytest

from annotation.models import Question
from annotation.presets import (
    PRESET_ORDER,
    RESERVED_KEYS,
    PresetError,
    parse_preset_names,
    preset_questions,
    validate_specs,
)
from annotation.protocols import study_protocol_apply
from concord.errors import ValidationFailed


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The personas' passwords are hashed once per test; the production hasher costs ~1 s each here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _by_key(specs):
    return {s["key"]: s for s in specs}


def _values(spec):
    return [o["value"] for o in spec["options"]]


def test_astrid_has_the_sentence_chunk_and_item_labels_of_the_paper():
    q = _by_key(preset_questions(["astrid"]))
    assert (q["information_bearing"]["scope"], _values(q["information_bearing"])) == ("sentence", ["yes", "no"])
    assert _values(q["grounded"]) == ["supported", "unsupported", "contradicted"]
    assert q["grounded"]["condition"] == {"question": "information_bearing", "in": ["yes"]}
    assert q["context_relevant"]["scope"] == "chunk"
    assert _values(q["scope_class"]) == ["emergency", "in_scope", "out_of_scope", "non_clinical"]
    for key in ("harmful", "inappropriate"):
        assert (q[key]["kind"], _values(q[key])) == ("ordinal", ["none", "slight", "severe"])
    # Helpfulness is a benefit with its own scale, low to high, not the harm scale.
    assert (q["helpful"]["kind"], _values(q["helpful"])) == (
        "ordinal", ["not_helpful", "somewhat_helpful", "very_helpful"])
    assert q["perceived_faithfulness"]["scope"] == "item"
    assert q["refusal_appropriate"]["kind"] == "binary"


def test_plainfact_has_kind_multilabel_roles_and_alignment():
    q = _by_key(preset_questions("plainfact"))
    assert _values(q["sentence_kind"]) == ["simplification", "elaboration"]
    assert q["functional_role"]["kind"] == "multilabel"
    assert _values(q["functional_role"]) == ["background", "definition", "example", "method_result", "other"]
    assert (q["source_alignment"]["scope"], q["source_alignment"]["kind"]) == ("sentence", "alignment")


def test_icat_has_aspect_coverage_with_evidence_and_missing_aspects():
    q = _by_key(preset_questions(["icat"]))
    assert (q["aspect_covered"]["scope"], _values(q["aspect_covered"])) == ("aspect", ["yes", "no"])
    assert q["aspect_evidence"]["kind"] == "alignment"
    assert q["aspect_evidence"]["condition"] == {"question": "aspect_covered", "in": ["yes"]}
    assert (q["missing_aspects"]["kind"], q["missing_aspects"]["required"]) == ("text", False)


def test_pubhealth_has_chunk_support_and_a_four_part_one_to_five_rubric():
    q = _by_key(preset_questions(["pubhealth"]))
    assert q["supports_answer"]["scope"] == "chunk"
    for key in ("rubric_faithfulness", "rubric_completeness", "rubric_factual_consistency", "rubric_clarity"):
        assert _values(q[key]) == ["1", "2", "3", "4", "5"]
        assert (q[key]["min_value"], q[key]["max_value"]) == (1, 5)


@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_every_combination_is_valid_with_unique_keyboard_keys_per_scope(size):
    for combo in itertools.combinations(PRESET_ORDER, size):
        specs = preset_questions(list(combo))
        validate_specs(specs)
        keys = [s["key"] for s in specs]
        assert len(keys) == len(set(keys))
        for scope in ("item", "sentence", "chunk", "aspect"):
            option_keys = [o["key"] for s in specs if s["scope"] == scope for o in s["options"]]
            assert all(option_keys), combo
            assert len(option_keys) == len(set(option_keys)), (combo, scope)
            assert not set(option_keys) & RESERVED_KEYS


def test_keys_do_not_depend_on_the_order_presets_are_listed_in():
    assert preset_questions(["pubhealth", "astrid"]) == preset_questions(["astrid", "pubhealth"])


def test_first_preset_keeps_its_keys_when_another_is_added():
    alone = _by_key(preset_questions(["astrid"]))
    combined = _by_key(preset_questions(["astrid", "pubhealth"]))
    assert alone["information_bearing"]["options"] == combined["information_bearing"]["options"]


def test_specs_are_fresh_copies():
    preset_questions(["astrid"])[0]["options"][0]["value"] = "changed"
    assert preset_questions(["astrid"])[0]["options"][0]["value"] == "yes"


def test_unknown_preset_is_refused_with_its_name():
    with pytest.raises(PresetError, match="unknown protocol preset 'astrix'"):
        parse_preset_names("astrid,astrix")


def test_a_condition_on_a_missing_question_is_invalid():
    specs = [s for s in preset_questions(["astrid"]) if s["key"] != "information_bearing"]
    with pytest.raises(PresetError, match="condition on unknown question"):
        validate_specs(specs)


def test_protocol_apply_creates_questions_once_and_records_presets(study):
    created = study_protocol_apply(study=study, presets="icat,astrid")
    assert len(created) == len(preset_questions(["icat", "astrid"]))
    assert study_protocol_apply(study=study, presets=["astrid"]) == []
    study.refresh_from_db()
    assert study.protocol_presets == ["icat", "astrid"]
    q = Question.objects.get(study=study, key="grounded")
    assert q.condition == {"question": "information_bearing", "in": ["yes"]}
    orders = list(Question.objects.filter(study=study).values_list("order", flat=True))
    assert orders == sorted(orders) and len(set(orders)) == len(orders)


def test_protocol_apply_adds_a_preset_later_without_key_clashes(study):
    study_protocol_apply(study=study, presets=["pubhealth"])
    study_protocol_apply(study=study, presets=["astrid"])
    for scope in ("item", "chunk", "sentence"):
        keys = [o["key"] for q in Question.objects.filter(study=study, scope=scope) for o in q.options]
        assert len(keys) == len(set(keys))


def test_protocol_apply_refuses_unknown_presets_and_writes_nothing(study):
    with pytest.raises(ValidationFailed):
        study_protocol_apply(study=study, presets="astrid,nope")
    assert not Question.objects.filter(study=study).exists()
