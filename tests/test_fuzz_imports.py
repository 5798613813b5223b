"""Property-based fuzzing of the import: whatever the bytes, items_import either
imports or raises the service's documented refusal (a DomainError: ImportRejected / ValidationFailed,
PayloadTooLarge, Conflict) and then has written nothing; the upload page and the REST endpoint never
answer 500. Example counts are modest so that the file runs in well under a minute."""

from __future__ import annotations

import csv
import gzip
import io
import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from annotation.imports import FIELDS, items_import
from annotation.models import Aspect, Assignment, Chunk, ImportBatch, Item, Label, LabelHistory, Sentence
from annotation.protocols import study_protocol_apply
from concord.errors import DomainError

pytestmark = pytest.mark.django_db

hsettings.register_profile(
    "import-fuzz",
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    # One study serves every example of a test (the test's transaction holds it).
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
FUZZ = hsettings.get_profile("import-fuzz")
HTTP_FUZZ = hsettings(FUZZ, max_examples=30)


def _counts() -> tuple[int, ...]:
    return (Item.objects.count(), Sentence.objects.count(), Chunk.objects.count(), Aspect.objects.count(),
            Label.objects.count(), LabelHistory.objects.count(), Assignment.objects.count(),
            get_user_model().objects.count(), ImportBatch.objects.count())


@pytest.fixture
def protocol_study(study):
    study_protocol_apply(study=study, presets=["astrid", "icat"])
    return study


def _valid_record(n: int) -> dict[str, Any]:
    return {
        "id": f"fuzz-{n}",
        "question": "What dose of drug X?",
        "answer": "Take 0.5 mg daily. See a doctor.",
        "contexts": [{"id": "d1", "text": "The usual dose is 0.5 mg.", "is_target": True}, "Another passage."],
        "source": "Drug X: 0.5 mg daily.",
        "aspects": ["the dose", {"text": "see a doctor", "importance": "nice_to_have"}],
        "scope": "in_scope",
        "system": "sys-a",
        "metadata": {"site": "a"},
    }


# Strings include NUL, lone surrogates and markup: each must be refused or stored, never crash.
_nasty_text = st.text(alphabet=st.characters(codec=None, categories=None), max_size=30) | st.sampled_from(
    ["", " ", "\x00", "\ud800", "<script>alert(1)</script>", "=cmd|' /C calc'!A0", "a" * 5000, "é\u202e",
     "s:99", "c:0", "a:-1", "item"]
)
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _nasty_text,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(_nasty_text | st.sampled_from(FIELDS), children, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def _near_valid_records(draw: Any) -> list[dict[str, Any]]:
    """Two or three good records, one of which has one field replaced, added or removed."""
    records = [_valid_record(i) for i in range(draw(st.integers(2, 3)))]
    victim = draw(st.sampled_from(records))
    name = draw(st.sampled_from([*FIELDS, "unknown_field"]))
    if draw(st.booleans()) and name in victim:
        del victim[name]
    else:
        victim[name] = draw(_json)
    return records


def _as_jsonl(records: list[Any]) -> bytes:
    # json.dumps escapes lone surrogates as \\ud800-style escapes, so the file itself is valid UTF-8.
    return ("\n".join(json.dumps(r) for r in records) + "\n").encode()


def _as_csv(records: list[dict[str, Any]]) -> bytes:
    columns = list(dict.fromkeys(k for r in records for k in r))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
    for r in records:
        writer.writerow(["" if c not in r else r[c] if isinstance(r[c], str) else json.dumps(r[c]) for c in columns])
    return out.getvalue().encode("utf-8", "surrogatepass")


def _import_or_refuse(study: Any, data: bytes, filename: str) -> None:
    """The property: success, or a DomainError with nothing written."""
    before = _counts()
    try:
        items_import(study=study, file=io.BytesIO(data), filename=filename)
    except DomainError:
        assert _counts() == before, "a refused import must write nothing"


@FUZZ
@given(data=st.binary(max_size=2000), name=st.sampled_from(["f.jsonl", "f.csv", "f.jsonl.gz", "f.txt"]))
def test_random_bytes_are_imported_or_refused_with_nothing_written(protocol_study, data, name):
    _import_or_refuse(protocol_study, data, name)


@FUZZ
@given(values=st.lists(_json, min_size=1, max_size=4))
def test_random_json_lines_are_imported_or_refused_with_nothing_written(protocol_study, values):
    _import_or_refuse(protocol_study, _as_jsonl(values), "values.jsonl")


@FUZZ
@given(records=_near_valid_records())
def test_near_valid_jsonl_records_are_imported_or_refused_with_nothing_written(protocol_study, records):
    _import_or_refuse(protocol_study, _as_jsonl(records), "near.jsonl")


@FUZZ
@given(records=_near_valid_records())
def test_near_valid_csv_rows_are_imported_or_refused_with_nothing_written(protocol_study, records):
    _import_or_refuse(protocol_study, _as_csv(records), "near.csv")


@FUZZ
@given(records=_near_valid_records(), gz=st.booleans())
def test_a_refused_file_in_a_valid_batch_leaves_the_earlier_records_unwritten(protocol_study, records, gz):
    # The bad record comes last: everything before it was valid and must not be written either.
    records.append({"id": "last", "question": "", "answer": 3})
    data = _as_jsonl(records)
    before = _counts()
    with pytest.raises(DomainError):
        items_import(study=protocol_study, file=io.BytesIO(gzip.compress(data) if gz else data), filename="x.jsonl")
    assert _counts() == before


# --- through HTTP: the REST endpoint and the upload page never answer 500 ----------------------

_ACCEPTED_STATUSES = {200, 201, 400, 409, 413}


@HTTP_FUZZ
@given(
    body=st.binary(max_size=1500) | _near_valid_records().map(_as_jsonl),
    name=st.sampled_from(["f.jsonl", "f.csv", "f.gz"]),
)
def test_the_import_api_never_answers_500(client, researcher, protocol_study, body, name):
    client.force_login(researcher)
    before = _counts()
    response = client.post(f"/api/studies/{protocol_study.slug}/items/import", {"file": SimpleUploadedFile(name, body)})
    assert response.status_code in _ACCEPTED_STATUSES, response.content[:500]
    if response.status_code >= 400:
        assert _counts() == before


@HTTP_FUZZ
@given(
    body=st.binary(max_size=1500) | _near_valid_records().map(_as_csv), fmt=st.sampled_from(["", "jsonl", "csv", "xml"])
)
def test_the_upload_page_never_answers_500(client, researcher, protocol_study, body, fmt):
    client.force_login(researcher)
    before = _counts()
    response = client.post(f"/studies/{protocol_study.slug}/import/",
                           {"file": SimpleUploadedFile("upload.csv", body), "format": fmt})
    assert response.status_code in _ACCEPTED_STATUSES, response.content[:500]
    if response.status_code >= 400:
        assert _counts() == before


@hsettings(FUZZ, max_examples=30)
@given(body=st.binary(max_size=1500) | _near_valid_records().map(_as_jsonl))
def test_the_console_import_job_checks_and_runs_any_file_without_crashing(researcher, protocol_study, body):
    # The console's two-step import (stored file, dry run, confirmed run) uses the same reader; a file
    # ends checked and imported, or invalid with its errors, and an invalid one writes nothing.
    from annotation.imports.jobs import import_job_check, import_job_confirm, import_job_create, import_job_run
    from annotation.models import ImportJobStatus

    before = _counts()
    job = import_job_create(study=protocol_study, actor=researcher, upload=SimpleUploadedFile("f.jsonl", body))
    job = import_job_check(job_id=job.pk)
    assert job.status in (ImportJobStatus.CHECKED, ImportJobStatus.INVALID)
    if job.status == ImportJobStatus.INVALID:
        assert job.errors and _counts() == before
        return
    job = import_job_run(job_id=import_job_confirm(job=job, actor=researcher).pk)
    assert job.status in (ImportJobStatus.DONE, ImportJobStatus.INVALID)
    if job.status == ImportJobStatus.INVALID:
        assert _counts() == before


# --- oversize and compressed uploads at the HTTP layer ------------------------------------------


@override_settings(IMPORT_MAX_BYTES=200)
def test_an_oversize_upload_is_answered_413_with_the_limit_and_writes_nothing(client, researcher, protocol_study):
    client.force_login(researcher)
    body = _as_jsonl([_valid_record(i) for i in range(5)])
    assert len(body) > 200
    response = client.post(
        f"/api/studies/{protocol_study.slug}/items/import", {"file": SimpleUploadedFile("big.jsonl", body)}
    )
    assert response.status_code == 413
    assert "import limit is 200 bytes" in response.json()["detail"]
    page = client.post(f"/studies/{protocol_study.slug}/import/", {"file": SimpleUploadedFile("big.jsonl", body)})
    assert page.status_code == 413 and b"import limit is 200 bytes" in page.content
    assert not Item.objects.exists() and not ImportBatch.objects.exists()


@override_settings(IMPORT_MAX_BYTES=20_000)
def test_a_gzip_bomb_upload_is_refused_and_writes_nothing(client, researcher, protocol_study):
    client.force_login(researcher)
    record = _valid_record(1) | {"answer": "Take it. " * 200_000}  # ~1.8 MB once inflated
    bomb = gzip.compress(json.dumps(record).encode(), compresslevel=9)
    assert len(bomb) < 20_000
    response = client.post(
        f"/api/studies/{protocol_study.slug}/items/import", {"file": SimpleUploadedFile("b.jsonl.gz", bomb)}
    )
    assert response.status_code == 413 and "decompresses to more than 20000 bytes" in response.json()["detail"]
    page = client.post(f"/studies/{protocol_study.slug}/import/", {"file": SimpleUploadedFile("b.jsonl.gz", bomb)})
    assert page.status_code == 413 and b"decompresses to more than" in page.content
    assert not Item.objects.exists() and not ImportBatch.objects.exists()


def test_a_truncated_gzip_upload_is_refused_with_400_and_writes_nothing(client, researcher, protocol_study):
    client.force_login(researcher)
    truncated = gzip.compress(_as_jsonl([_valid_record(1)]))[:-12]
    response = client.post(
        f"/api/studies/{protocol_study.slug}/items/import", {"file": SimpleUploadedFile("t.jsonl.gz", truncated)}
    )
    assert response.status_code == 400 and "not a valid gzip file" in response.json()["detail"]
    assert not Item.objects.exists() and not ImportBatch.objects.exists()
