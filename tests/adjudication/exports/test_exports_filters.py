"""An export limited to pools, questions or gold (``adjudication.exports.filters.ExportFilters``) limits everything it
carries, not only the annotators' labels: the adjudication cases and the gold records too, in every format
(JSONL, the long CSV, the Hugging Face folder) and in the card's counts.

The study: two pools (P and Q) that both ask ``pf`` and ``safe``, two annotators each.

* ``both``: P agrees on pf (gold) and disagrees on safe (case); Q disagrees on pf (case), agrees on safe (gold);
* ``p-only``: rated by P only, which disagrees on pf (case) and agrees on safe (gold);
* ``q-only``: rated by Q only, which agrees on pf (gold) and disagrees on safe (case);
* ``none``: rated by nobody.

So every (pool, question) pair holds gold on some item and a case on another, and a filter that forgets the
cases or the gold of one pair lets a record of that pair through.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from adjudication.exports.filters import ExportFilters
from adjudication.exports.writers import write_export
from adjudication.services import item_disagreements_detect
from tests import factories
from tests.adjudication.gold_helpers import pool_with_members, submit_labels, yes_no

pytestmark = pytest.mark.django_db

# (item, pool) -> the two annotators' answers on (pf, safe)
RATINGS = {
    ("both", "P"): (("yes", "yes"), ("yes", "no")),
    ("both", "Q"): (("yes", "no"), ("no", "no")),
    ("p-only", "P"): (("yes", "no"), ("no", "no")),
    ("q-only", "Q"): (("no", "no"), ("yes", "no")),
}
ITEMS = ("both", "p-only", "q-only", "none")


def _expected() -> dict[str, dict[str, set[tuple[str, str]]]]:
    """Per item: the (pool, question) of its gold and of its cases, from RATINGS."""
    out: dict[str, dict[str, set[tuple[str, str]]]] = {item: {"gold": set(), "cases": set()} for item in ITEMS}
    for (item, pool), per_question in RATINGS.items():
        for question, (first, second) in zip(("pf", "safe"), per_question, strict=True):
            out[item]["gold" if first == second else "cases"].add((pool, question))
    return out


@pytest.fixture
def two_pools(study):
    pf, safe = yes_no(study, "pf"), yes_no(study, "safe")
    pools = {name: pool_with_members(study, [pf, safe], n=2, name=name) for name in ("P", "Q")}
    items = {name: factories.make_item(study, name, answer=f"Answer of {name}.") for name in ITEMS}
    for (item, pool_name), per_question in RATINGS.items():
        pool, members = pools[pool_name]
        for annotator, answers in zip(members, zip(*per_question, strict=True), strict=True):
            submit_labels(pool, items[item], annotator, {("pf", "item"): answers[0], ("safe", "item"): answers[1]})
        item_disagreements_detect(pool_id=pool.pk, item_id=items[item].pk)
    return study


FILTERS = [
    ExportFilters(pools=("P",)),
    ExportFilters(pools=("Q",)),
    ExportFilters(questions=("pf",)),
    ExportFilters(questions=("safe",)),
    ExportFilters(pools=("Q",), questions=("safe",)),
    ExportFilters(pools=("P",), gold_only=True),
    ExportFilters(questions=("pf",), gold_only=True),
    ExportFilters(),
]


def _kept(filters: ExportFilters) -> dict[str, dict[str, set[tuple[str, str]]]]:
    """What the export must hold per item: only the pairs the filters allow, and only the items in them."""

    def allowed(pair: tuple[str, str]) -> bool:
        pool, question = pair
        return (not filters.pools or pool in filters.pools) and (not filters.questions or question in filters.questions)

    kept = {}
    for item, entries in _expected().items():
        rated_by = {pool for (i, pool) in RATINGS if i == item}
        if filters.pools and not rated_by & set(filters.pools):
            continue  # no assignment or gold in the chosen pools
        gold = {pair for pair in entries["gold"] if allowed(pair)}
        if filters.gold_only and not gold:
            continue  # no current gold within the limits
        kept[item] = {"gold": gold, "cases": {pair for pair in entries["cases"] if allowed(pair)}}
    return kept


def _pairs(entries: list[dict]) -> set[tuple[str, str]]:
    return {(e["pool"], e["question"]) for e in entries}


def _jsonl_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_limits_are_described_in_words():
    assert ExportFilters().describe() == "everything"
    assert ExportFilters(pools=("P", "Q"), questions=("pf", "safe"), gold_only=True).describe() == (
        "gold only; pools P, Q; questions pf, safe"
    )


def test_the_fixture_has_gold_and_a_case_for_every_pool_and_question():
    expected = _expected()
    every = {(pool, question) for pool in "PQ" for question in ("pf", "safe")}
    assert set().union(*(e["gold"] for e in expected.values())) == every
    assert set().union(*(e["cases"] for e in expected.values())) == every


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: f.describe())
def test_jsonl_limits_cases_and_gold_to_the_chosen_pools_and_questions(two_pools, tmp_path, filters):
    expected = _kept(filters)
    header, *records = _jsonl_records(
        write_export(study=two_pools, fmt="jsonl", out=tmp_path / "e.jsonl", filters=filters)
    )
    assert {r["id"]: {"gold": _pairs(r["gold"]), "cases": _pairs(r["cases"])} for r in records} == expected
    for record in records:
        # Labels and assignments follow the same limits (none at all for gold only): each pool that rated the
        # item has two assignments and labels of both questions.
        rated_by = {pool for (item, pool) in RATINGS if item == record["id"]} & (set(filters.pools) or {"P", "Q"})
        questions = set(filters.questions) or {"pf", "safe"}
        if filters.gold_only:
            rated_by = set()
        assert sorted(a["pool"] for a in record["assignments"]) == sorted(2 * list(rated_by))
        assert _pairs(record["labels"]) == {(pool, q) for pool in rated_by for q in questions}
    assert header.get("filters", {"pools": [], "questions": [], "gold_only": False}) == filters.as_dict()


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: f.describe())
def test_the_hugging_face_folder_limits_cases_and_gold_the_same_way(two_pools, tmp_path, filters):
    out = write_export(study=two_pools, fmt="hf", out=tmp_path / "hf", filters=filters)
    records = _jsonl_records(out / "data" / "train.jsonl")
    assert {r["id"]: {"gold": _pairs(r["gold"]), "cases": _pairs(r["cases"])} for r in records} == _kept(filters)


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: f.describe())
def test_the_long_csv_holds_only_the_gold_rows_within_the_limits(two_pools, tmp_path, filters):
    out = write_export(study=two_pools, fmt="csv", out=tmp_path / "e.csv", filters=filters)
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    gold = {(r["item_id"], r["pool"], r["question"]) for r in rows if r["record"].startswith("gold")}
    expected = _kept(filters)
    assert gold == {(item, *pair) for item, entries in expected.items() for pair in entries["gold"]}
    labels = {r["item_id"] for r in rows if r["record"] == "label"}
    assert labels <= (set() if filters.gold_only else set(expected))


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: f.describe())
def test_the_cards_counts_are_those_of_the_limited_export(two_pools, tmp_path, filters):
    expected = _kept(filters)
    write_export(study=two_pools, fmt="jsonl", out=tmp_path / "e.jsonl", filters=filters)
    card = (tmp_path / "e.jsonl.card.md").read_text(encoding="utf-8")
    n_gold = sum(len(e["gold"]) for e in expected.values())
    n_cases = sum(len(e["cases"]) for e in expected.values())
    assert f"| items | {len(expected)} |" in card
    assert f"| gold current | {n_gold} |" in card and f"| gold versions | {n_gold} |" in card
    assert f"| cases | {n_cases} |" in card
    # Every gold record here was made by unanimity: the provenance table counts the exported ones.
    assert f"| unanimous | {n_gold} |" in card
    pools = filters.pools or ("P", "Q")
    assert f"| annotators | {2 * len(pools)} |" in card  # two in each pool exported
    # The agreement table has a row for each pool and question exported, and none for the others.
    table = card.split("## Agreement")[1].split("## Gold provenance")[0]
    rows = {tuple(cell.strip() for cell in line.split("|")[1:3]) for line in table.splitlines()[4:] if line}
    assert rows == {(pool, question) for pool in pools for question in (filters.questions or ("pf", "safe"))}
    # A gold-only export carries no labels: its card says so rather than "no submitted labels" for pools
    # whose members did submit.
    notes = {line.split("|")[-2].strip() for line in table.splitlines()[4:] if line}
    if filters.gold_only:
        assert notes == {"labels not in this export (gold only)"}
    else:
        assert "labels not in this export (gold only)" not in notes and "no submitted labels" not in notes
