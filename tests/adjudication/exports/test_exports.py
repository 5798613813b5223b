"""Streaming exports for researchers: JSONL, long CSV, a Hugging Face folder, cards, downloads."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.urls import reverse

from adjudication.exports.records import iter_records
from adjudication.exports.services import export_request, export_run
from adjudication.exports.writers import write_export
from adjudication.models import AdjudicationCase, ExportDownload, ExportJob
from adjudication.services import case_resolve, item_disagreements_detect
from annotation.models import Aspect, AspectOrigin, AspectStatus, Study
from concord.csv_writer import csv_cell
from scoring.models import Score, ScoreRun
from tests import factories
from tests.adjudication.gold_helpers import pool_with_members, submit_labels, yes_no

FORMULA = '=HYPERLINK("http://evil.example","click")'


@pytest.fixture
def exported_study(study, adjudicator):
    """Two items, two annotators, a text question carrying a formula, one adjudicated case with two
    gold versions, a proposed aspect and a score run."""
    Study.objects.filter(pk=study.pk).update(
        licence="MIT — K-QA (Manes et al. 2024)", hidden_metadata_fields=["hospital"]
    )
    study.refresh_from_db()
    factories.grant(study, adjudicator, "adjudicator")
    pf = yes_no(study, "pf")
    note = factories.make_question(study, "note", kind="text", options=[], required=False)
    covered = yes_no(study, "aspect_covered", scope="aspect")
    pool, (a, b) = pool_with_members(study, [pf, note, covered], n=2)
    one = factories.make_item(
        study, "q-1", answer="Take 0.5 mg daily. Hello!", system="sys-A", metadata={"hospital": "X"}
    )
    factories.make_chunk(one, 1, "The usual dose is 0.5 mg daily.", document_id="doc-7", is_labelled_target=True)
    first = Aspect.objects.create(item=one, text="Dose", version=1)
    Aspect.objects.create(
        item=one, text="Renal", origin=AspectOrigin.PROPOSED, status=AspectStatus.PROPOSED, proposed_by=a
    )
    two = factories.make_item(study, "q-2", answer="Call 911 now.")
    submit_labels(
        pool,
        one,
        a,
        {("pf", "item"): "yes", ("note", "item"): FORMULA, (covered.key, f"a:{first.pk}"): "yes"},
        active_seconds=30,
    )
    submit_labels(
        pool,
        one,
        b,
        {("pf", "item"): "no", ("note", "item"): "-1.5", (covered.key, f"a:{first.pk}"): "yes"},
        active_seconds=12,
    )
    submit_labels(pool, two, a, {("pf", "item"): "yes"})
    submit_labels(pool, two, b, {("pf", "item"): "yes"})
    for item in (one, two):
        item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    case = AdjudicationCase.objects.get(question=pf)
    case_resolve(case_id=case.pk, actor=adjudicator, value="yes", rationale="chunk 1", confidence=3, expected_version=0)
    case_resolve(
        case_id=case.pk, actor=adjudicator, value="no", rationale="re-read", guideline_gap=True, expected_version=1,
        revise_reason="chunk 2 contradicts it",
    )
    run = ScoreRun.objects.create(
        study=study, metric="cf", metric_version="2", backend="nli", model_identity="tiny-nli@abc"
    )
    Score.objects.create(run=run, item=one, unit_key="item", value=0.5, state="ok", details={"verdicts": [1, 0]})
    Score.objects.create(run=run, item=two, unit_key="item", value=None, state="undetermined", details={})
    return study


def _jsonl(path: Path) -> tuple[dict, list[dict]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return lines[0], lines[1:]


def test_jsonl_has_a_header_and_one_record_per_item_with_everything(exported_study, tmp_path):
    out = write_export(study=exported_study, fmt="jsonl", out=tmp_path / "e.jsonl")
    header, records = _jsonl(out)
    assert header["concord_export"] == 1 and header["study"]["licence"].startswith("MIT")
    assert [r["id"] for r in records] == ["q-1", "q-2"]
    one = records[0]
    assert [s["unit"] for s in one["sentences"]] == ["s:0", "s:1"]
    assert one["contexts"] == [
        {"unit": "c:1", "id": "doc-7", "text": "The usual dose is 0.5 mg daily.", "is_target": True}
    ]
    assert [(a["unit"], a["status"], a["origin"], a["version"]) for a in one["aspects"]] == [
        ("a:0", "accepted", "reference", 1),
        ("a:1", "proposed", "proposed", 1),
    ]
    assert one["aspects"][1]["proposed_by"] == "P-A1"
    labels = {(lab["annotator"], lab["question"], lab["unit"]): lab["value"] for lab in one["labels"]}
    assert labels[("P-A1", "pf", "item")] == "yes" and labels[("P-A2", "aspect_covered", "a:0")] == "yes"
    gold_pf = [g for g in one["gold"] if g["question"] == "pf"]
    assert [(g["version"], g["value"], g["is_current"], g["source"]) for g in gold_pf] == [
        (1, "yes", False, "adjudicated"),
        (2, "no", True, "adjudicated"),
    ]
    assert gold_pf[1]["adjudicator"] == "adam-adjudicator" and gold_pf[1]["guideline_gap"] is True
    assert gold_pf[0]["rationale"] == "chunk 1" and gold_pf[0]["confidence"] == 3
    assert one["scores"] == [
        {
            "run": "run-1",
            "metric": "cf",
            "metric_version": "2",
            "backend": "nli",
            "model_identity": "tiny-nli@abc",
            "unit": "item",
            "value": 0.5,
            "state": "ok",
            "details": {"verdicts": [1, 0]},
        }
    ]
    assert records[1]["scores"][0]["state"] == "undetermined" and records[1]["scores"][0]["value"] is None
    assert {g["source"] for g in records[1]["gold"]} == {"unanimous"}
    assert [x["active_seconds"] for x in one["assignments"]] == [30, 12]


def test_annotators_appear_only_under_pseudonyms(exported_study, tmp_path):
    text = write_export(study=exported_study, fmt="jsonl", out=tmp_path / "e.jsonl").read_text()
    assert "p-annotator-0" not in text and "p-annotator-1" not in text


def test_every_export_has_a_card_with_counts_pools_blinding_agreement_and_licence(exported_study, tmp_path):
    write_export(study=exported_study, fmt="jsonl", out=tmp_path / "e.jsonl")
    card = (tmp_path / "e.jsonl.card.md").read_text()
    assert "MIT — K-QA (Manes et al. 2024)" in card
    assert "| items | 2 |" in card
    assert "| P | 2 | 2 |" in card
    assert "Metadata fields hidden from annotators: hospital" in card
    # pf: q-1 disagrees, q-2 agrees → percent agreement 0.5 over 2 units
    assert "| P | pf | binary | 2 | 0.500 |" in card
    assert "free text" in card


def test_the_cards_text_keeps_an_ampersand_and_shows_markup_and_references_as_text(exported_study, tmp_path):
    """"Q&A" reads "Q&A" in the file, not "Q&amp;A"; a tag or a character reference the study's owner typed
    is shown as typed, never interpreted by a Markdown renderer."""
    exported_study.name = "Q&A <b>x</b> &lt;y&gt; & more"
    exported_study.licence = "CC BY 4.0 & K-QA <i>"
    exported_study.save(update_fields=["name", "licence"])
    write_export(study=exported_study, fmt="jsonl", out=tmp_path / "e.jsonl")
    card = (tmp_path / "e.jsonl.card.md").read_text()
    assert "# Q&A &lt;b&gt;x&lt;/b&gt; &amp;lt;y&amp;gt; & more — Concord export" in card
    assert "CC BY 4.0 & K-QA &lt;i&gt;" in card
    assert "&amp;A" not in card and "<b>x" not in card and "K-QA <i>" not in card


def test_csv_is_long_format_and_neutralizes_formulas_but_not_numbers(exported_study, tmp_path):
    out = write_export(study=exported_study, fmt="csv", out=tmp_path / "e.csv")
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert set(rows[0]) == {
        "record", "item_id", "unit", "pool", "question", "annotator", "value", "version", "source",
        "item_question", "item_answer", "unit_text",
    }
    notes = {r["annotator"]: r["value"] for r in rows if r["question"] == "note" and r["record"] == "label"}
    assert notes["P-A1"] == "'" + FORMULA
    assert notes["P-A2"] == "-1.5"
    assert {r["record"] for r in rows} == {"label", "gold", "gold_superseded"}
    assert not any(cell.startswith(("=", "+", "@")) for r in rows for cell in r.values())


@pytest.mark.parametrize("cell", ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx"])
def test_formula_like_cells_are_prefixed(cell):
    # The export's CSV goes through the one CSV writer (concord.csv_writer), which neutralises them.
    assert csv_cell(cell) == "'" + cell


def test_the_hf_folder_loads_with_the_datasets_library(exported_study, tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    folder = write_export(study=exported_study, fmt="hf", out=tmp_path / "hf")
    readme = (folder / "README.md").read_text()
    assert readme.startswith("---\n") and "data_files" in readme and "MIT" in readme
    ds = datasets.load_dataset(str(folder), split="train", cache_dir=str(tmp_path / "cache"))
    assert ds.num_rows == 2
    assert ds[0]["id"] == "q-1"
    assert json.loads(ds[0]["labels"][0]["value"]) in ("yes", "no", FORMULA, "-1.5")


def test_a_requested_export_runs_in_the_background_with_progress(
    exported_study, researcher, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    with django_capture_on_commit_callbacks() as callbacks:
        job = export_request(study_id=exported_study.pk, fmt="jsonl", actor=researcher)
    assert len(callbacks) == 1 and job.status == "queued"
    job = export_run(job_id=job.pk)
    assert (job.status, job.n_done, job.n_total) == ("done", 2, 2)
    assert Path(job.path).exists() and job.size_bytes > 0
    assert export_run(job_id=job.pk).finished_at == job.finished_at  # a redelivered task does nothing


def test_download_is_an_attachment_and_is_recorded(client, exported_study, researcher, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    job = ExportJob.objects.create(study=exported_study, format="csv", requested_by=researcher)
    export_run(job_id=job.pk)
    client.force_login(researcher)
    response = client.get(reverse("adjudication:export-download", args=[job.pk]))
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment;")
    assert b"".join(response.streaming_content).startswith(b"record,item_id")
    card = client.get(reverse("adjudication:export-download", args=[job.pk]) + "?part=card")
    assert card["Content-Disposition"].startswith("attachment;")
    assert list(ExportDownload.objects.values_list("user__username", "job_id")) == [("rita-researcher", job.pk)] * 2


def test_only_researchers_export_and_download(client, exported_study, adjudicator, stranger, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    job = ExportJob.objects.create(study=exported_study, format="jsonl")
    export_run(job_id=job.pk)
    client.force_login(adjudicator)
    assert client.get(reverse("adjudication:export-download", args=[job.pk])).status_code == 404
    assert (
        client.post(reverse("adjudication:exports", args=[exported_study.slug]), {"format": "jsonl"}).status_code == 403
    )
    client.force_login(stranger)
    assert client.get(reverse("adjudication:export-download", args=[job.pk])).status_code == 404
    assert client.get(reverse("adjudication-api-export", args=[job.pk])).status_code == 404
    assert not ExportDownload.objects.exists()


def test_the_exports_page_requests_an_export_and_shows_progress(client, exported_study, researcher):
    client.force_login(researcher)
    response = client.post(
        reverse("adjudication:exports", args=[exported_study.slug]), {"format": "hf"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200 and 'hx-trigger="every 2s"' in response.content.decode()
    assert ExportJob.objects.get().format == "hf"
    api = client.post(
        reverse("adjudication-api-exports", args=[exported_study.slug]),
        {"format": "nope"},
        content_type="application/json",
    )
    assert api.status_code == 400


def test_the_command_exports_from_the_shell(exported_study, tmp_path):
    out = tmp_path / "cli.jsonl"
    call_command("export_study", exported_study.slug, "--format", "jsonl", "--out", str(out), stdout=io.StringIO())
    assert len(out.read_text().splitlines()) == 3
    assert ExportJob.objects.get().status == "done"


def _count_queries(fn) -> int:
    # An execute wrapper, not the debug query log: the exporter clears that log per chunk.
    executed = []

    def count(execute, sql, params, many, context):
        executed.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        fn()
    return len(executed)


def test_reading_records_costs_a_fixed_number_of_queries_per_chunk_not_per_item(exported_study):
    two_items = _count_queries(lambda: list(iter_records(exported_study, chunk=1000)))
    for i in range(6):
        factories.make_item(exported_study, f"extra-{i}")
    eight_items = _count_queries(lambda: list(iter_records(exported_study, chunk=1000)))
    assert eight_items == two_items > 0


def test_the_hf_export_of_a_job_is_one_zip_with_the_card_and_the_data(exported_study, tmp_path):
    import zipfile

    out = write_export(study=exported_study, fmt="hf", out=tmp_path / "hf.zip")
    with zipfile.ZipFile(out) as archive:
        names = set(archive.namelist())
        assert {"README.md", "data/train.jsonl", "concord_export.json"} <= names
        assert len(archive.read("data/train.jsonl").splitlines()) == 2
    assert not any(p.name.startswith("concord-hf-") for p in tmp_path.iterdir())


@pytest.mark.parametrize("chunk", [1, 2, 1000])
def test_items_of_another_study_in_between_never_leak_into_an_export(exported_study, researcher, chunk):
    other = factories.make_study(owner=researcher, slug="other-study")
    for i in range(3):
        foreign = factories.make_item(other, f"foreign-{i}", answer="Secret answer.")
        factories.make_chunk(foreign, 1, "secret chunk")
        factories.make_item(exported_study, f"mine-{i}")
    records = list(iter_records(exported_study, chunk=chunk))
    assert [r["id"] for r in records] == ["q-1", "q-2", "mine-0", "mine-1", "mine-2"]
    assert "secret" not in json.dumps(records).lower()
