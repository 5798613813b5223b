"""Hostile input: LLM endpoints, filter parameters, HTML in every text field,
oversize and compressed uploads. The property-based import fuzzing lives in test_fuzz_imports.py."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from scoring.backends.llm import LLMBackend
from scoring.metrics import BackendUnavailable
from scoring.models import ScoreRun

# --- LLM endpoints: administrators only, public addresses only unless allowed --------------------

NON_PUBLIC_ENDPOINTS = [
    "http://127.0.0.1:8000/v1",
    "http://localhost:8000/v1",
    "http://[::1]:8000/v1",
    "http://10.1.2.3/v1",
    "http://172.16.5.4/v1",
    "http://192.168.1.10/v1",
    "http://169.254.169.254/latest",
    "http://[fc00::1]/v1",
    "http://0.0.0.0:8000/v1",
    "http://[::ffff:127.0.0.1]/v1",
]


@pytest.mark.parametrize("url", NON_PUBLIC_ENDPOINTS)
def test_the_llm_backend_refuses_a_loopback_or_private_endpoint_by_default(settings, url):
    settings.LLM_ALLOW_PRIVATE_ENDPOINTS = False
    with pytest.raises(BackendUnavailable, match="LLM_ALLOW_PRIVATE_ENDPOINTS"):
        LLMBackend(base_url=url, model="judge")


def test_the_llm_backend_accepts_a_private_endpoint_when_an_administrator_allows_it(settings):
    settings.LLM_ALLOW_PRIVATE_ENDPOINTS = True
    assert LLMBackend(base_url="http://127.0.0.1:8000/v1", model="judge").base_url == "http://127.0.0.1:8000/v1"


def test_the_llm_backend_accepts_a_public_address(settings):
    settings.LLM_ALLOW_PRIVATE_ENDPOINTS = False
    # A literal public address (TEST-NET would be "reserved"; this is an ordinary routable one): no DNS needed.
    assert LLMBackend(base_url="https://93.184.216.34/v1", model="judge").base_url == "https://93.184.216.34/v1"


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://example.org/", "http:///v1", "not a url"])
def test_the_llm_backend_refuses_an_endpoint_that_is_not_an_http_url(settings, url):
    settings.LLM_ALLOW_PRIVATE_ENDPOINTS = True
    with pytest.raises(BackendUnavailable, match="http"):
        LLMBackend(base_url=url, model="judge")


def test_the_configured_llm_endpoint_is_checked_when_the_backend_is_built_from_settings(settings):
    settings.LLM_ALLOW_PRIVATE_ENDPOINTS = False
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://169.254.169.254/v1", "judge"
    with pytest.raises(BackendUnavailable, match=r"non-public address 169\.254\.169\.254"):
        LLMBackend.from_settings()


@pytest.mark.django_db
def test_a_researcher_cannot_point_a_score_run_at_an_endpoint_of_their_choosing(researcher, study):
    api = APIClient()
    api.force_authenticate(researcher)
    response = api.post(
        f"/api/scoring/studies/{study.slug}/runs/",
        {"metric": "ra", "backend": "llm", "backend_options": {"base_url": "http://169.254.169.254/"}},
        format="json",
    )
    assert response.status_code == 400 and "LLM_BASE_URL" in response.data["detail"]
    assert not ScoreRun.objects.exists()


# --- HTML and script in every text field: escaped in every page, neutralised in every export -------

SCRIPT, IMG = "<script>alert(1)</script>", "<img src=x onerror=alert(1)>"
HOSTILE = SCRIPT + IMG
# Query parameters every page is also opened with: reflected markup, and lookups across relations that
# an allow-list must ignore or refuse (never apply).
HOSTILE_QUERY = {
    "q": HOSTILE,
    "status": HOSTILE,
    "page": HOSTILE,
    "item": HOSTILE,
    "template": HOSTILE,
    "state": HOSTILE,
    "annotator__password": "x",
    "order_by": "annotator__password",
    "user__password__startswith": "pbkdf2",
    "study__owner__password": "x",
    "rater": HOSTILE,
    "source": HOSTILE,
    "pool": "1",
    "question": HOSTILE,
    "window": HOSTILE,
    "controls": HOSTILE,
    "flagged": HOSTILE,
}


def _assert_escaped(body: str, where: str) -> None:
    for tag in (SCRIPT, IMG):
        assert tag not in body, f"{where} shows {tag!r} unescaped"


@pytest.fixture
def hostile_study(researcher, annotator, adjudicator, tmp_path, settings):
    """A study whose every user-written text field carries both payloads, imported through the service."""
    import io
    import json

    from adjudication.models import AdjudicationCase, GoldLabel
    from annotation.imports import items_import
    from annotation.models import Aspect, Item, Pool, Role
    from scoring.models import KnowledgeBase, Score
    from tests import factories

    evil = factories.make_user(IMG)  # usernames are not validated when accounts come from elsewhere
    study = factories.make_study(
        owner=researcher,
        slug="hostile",
        name=HOSTILE,
        guidelines=HOSTILE,
        licence=HOSTILE,
        blind_system=False,
        show_scores_to_adjudicators=True,
    )
    options = [{"value": "yes", "label": HOSTILE, "key": "1"}, {"value": "no", "label": HOSTILE, "key": "2"}]
    pf = factories.make_question(study, "pf", prompt=HOSTILE, help_text=HOSTILE, options=options)
    note = factories.make_question(study, "note", kind="text", options=[], prompt=HOSTILE, help_text=HOSTILE)
    record = {
        "id": "x1",
        "question": HOSTILE,
        "answer": f"Take it. {HOSTILE} Now.",
        "source": HOSTILE,
        "contexts": [{"id": "doc-1", "text": HOSTILE, "is_target": True}, HOSTILE],
        "aspects": [HOSTILE],
        "system": HOSTILE,
        "metadata": {"site": HOSTILE, HOSTILE: "v"},
        "labels": [
            {"annotator": SCRIPT, "question": "pf", "unit": "item", "value": "yes"},
            {"annotator": IMG, "question": "pf", "unit": "item", "value": "no"},
            {"annotator": SCRIPT, "question": "note", "unit": "item", "value": HOSTILE},
            {"annotator": IMG, "question": "note", "unit": "item", "value": '=HYPERLINK("http://x","y")'},
        ],
    }
    items_import(
        study=study,
        file=io.BytesIO(json.dumps(record).encode() + b"\n"),
        filename="hostile.jsonl",
        actor=researcher,
        pool_name=HOSTILE,
    )
    item = Item.objects.get(study=study, external_id="x1")
    pool = factories.make_pool(study, "annotators " + IMG, questions=[pf, note])
    membership = factories.add_member(pool, annotator, SCRIPT)
    assignment = factories.make_assignment(pool, item, annotator)
    factories.grant(study, adjudicator, Role.ADJUDICATOR)
    factories.grant(study, evil, Role.ADJUDICATOR)
    aspect = Aspect.objects.create(item=item, text=HOSTILE, origin="proposed", status="proposed", proposed_by=annotator)
    imported = Pool.objects.get(study=study, name=HOSTILE)
    imported.questions.add(pf, note)
    case = AdjudicationCase.objects.get_or_create(pool=imported, item=item, unit_key="item", question=pf)[0]
    # An item of known answer whose known answer and explanation are hostile (the console's quality page), and
    # a flag threshold on the imported pool, whose hostile pseudonyms the annotator-quality page then lists.
    from annotation.quality import control_mark

    control_mark(
        study=study, item=factories.make_item(study, "x2", question=HOSTILE), kind="attention",
        answers_raw={"note": HOSTILE}, explanation=HOSTILE, actor=researcher,
    )
    Pool.objects.filter(pk=imported.pk).update(flag_below=0.5)
    GoldLabel.objects.create(
        pool=case.pool,
        item=item,
        unit_key="item",
        question=pf,
        value="yes",
        source="adjudicated",
        case=case,
        adjudicator=evil,
        rationale=HOSTILE,
        confidence=3,
    )
    run = ScoreRun.objects.create(
        study=study,
        metric="ra",
        metric_version="1",
        backend="lexical",
        model_identity=HOSTILE,
        created_by=researcher,
        status="done",
    )
    Score.objects.create(run=run, item=item, unit_key="item", value=0.5, state="ok", details={"why": HOSTILE})
    kb = KnowledgeBase.objects.create(study=study, name=HOSTILE[:200])
    from adjudication.exports.writers import write_export
    from adjudication.models import ExportJob

    out = write_export(study=study, fmt="csv", out=tmp_path / "hostile.csv")
    export = ExportJob.objects.create(study=study, format="csv", status="done", path=str(out), requested_by=researcher)
    # An invitation to the hostile pool, from the hostile account, to a hostile name, bound to the annotator:
    # their home page and invitation page, and the researcher's lists, show all three.
    from django.utils import timezone

    from annotation.models import StudyInvitation

    now = timezone.now()
    invitation = StudyInvitation.objects.create(
        study=study, pool=imported, invited=HOSTILE, user=annotator, invited_by=evil, updated_by=evil,
        created_at=now, expires_at=now + timezone.timedelta(days=1),
    )
    return {
        "study": study,
        "item": item,
        "pool": pool,
        "assignment": assignment,
        "case": case,
        "aspect": aspect,
        "run": run,
        "kb": kb,
        "membership": membership,
        "export": export,
        "imported": imported,
        "invitation": invitation,
        "question": pf,
        "evil": evil,
    }


def _page_routes() -> list[tuple[str, list[str]]]:
    from django.urls import URLResolver, get_resolver

    def walk(patterns, prefix=""):
        for p in patterns:
            if isinstance(p, URLResolver):
                yield from walk(p.url_patterns, prefix + str(p.pattern))
            else:
                yield prefix + str(p.pattern), list(p.pattern.converters)

    return [(route, params) for route, params in walk(get_resolver().url_patterns) if not route.startswith("admin/")]


def _fill(route: str, params: list[str], h: dict) -> str | None:
    """The route with the hostile study's ids filled in (None for a parameter this study has no value for)."""
    import re

    by_segment = {
        "assignments": h["assignment"].pk,
        "cases": h["case"].pk,
        "aspects": h["aspect"].pk,
        "pools": h["imported"].pk,
        "exports": h["export"].pk,
        "download": h["export"].pk,
        "validation": 0,
        "validation-studies": 0,
    }
    # Reports take the imported pool (its labels, hostile pseudonyms and case); the annotator's pool
    # is reached through their assignment.
    values = {
        "slug": h["study"].slug,
        "pool_id": h["imported"].pk,
        "run_id": h["run"].pk,
        "kb_id": h["kb"].pk,
        "key": "pf",
        "question": "pf",
        "membership_id": h["membership"].pk,
        "external_id": "x1",
        "fmt": "csv",
        "measure": "human_cf",
        "job_id": 0,
        "invitation_id": h["invitation"].pk,
    }
    path = route
    for name in params:
        if name in ("pk", "id"):
            segment = route.split(f"<int:{name}>")[0].rstrip("/").split("/")[-1]
            value = by_segment.get(segment)
        else:
            value = values.get(name)
        if value is None:
            return None
        path = re.sub(rf"<(?:\w+:)?{name}>", str(value), path)
    return "/" + path


def test_html_in_every_text_field_is_escaped_on_every_page_each_role_opens(
    client, hostile_study, researcher, annotator, adjudicator
):
    opened: dict[str, set[str]] = {}
    for who in (researcher, adjudicator, annotator, hostile_study["evil"]):
        client.force_login(who)
        run, imported = hostile_study["run"].pk, hostile_study["imported"].pk
        # Valid report parameters, so that the report pages render the hostile pool and question too.
        report_query = {
            "run": run,
            "runs": run,
            "source": f"run:{run}",
            "pool": imported,
            "question": "pf",
            "features": f"run:{run}",
        }
        query_variants = ({}, HOSTILE_QUERY, {"part": "card"}, report_query)
        for route, params in _page_routes():
            path = _fill(route, params, hostile_study)
            if path is None:
                continue
            for query in query_variants:
                response = client.get(path, query)
                not_ready = path == "/readyz" and response.status_code == 503  # the probe's answer: no worker here
                assert response.status_code < 500 or not_ready, (
                    f"{who} GET {path} {query and 'with hostile query'} → {response.status_code}"
                )
                content_type = response.get("Content-Type", "")
                body = b"".join(response.streaming_content) if response.streaming else response.content
                if "html" in content_type or "markdown" in content_type:
                    _assert_escaped(body.decode("utf-8", "replace"), f"{who} GET {path}")
                if response.status_code == 200:
                    opened.setdefault(who.get_username(), set()).add(route)
                if route.endswith("download/") and response.status_code == 200:
                    assert response["Content-Disposition"].startswith("attachment")
        client.logout()
    # The pages that show the hostile text were really rendered (not refused), for each role.
    assert {"assignments/<int:pk>/", "", "invitations/<int:invitation_id>/"} <= opened[annotator.get_username()]
    assert {"adjudication/cases/<int:pk>/", "adjudication/studies/<slug:slug>/cases/"} <= opened[
        adjudicator.get_username()
    ]
    assert {
        "console/<slug:slug>/",
        "console/<slug:slug>/items/",
        "console/<slug:slug>/preview/",
        "console/<slug:slug>/people/",
        "console/<slug:slug>/protocol/",
        "console/<slug:slug>/pools/<int:pool_id>/",
        "scoring/runs/<int:run_id>/",
        "scoring/studies/<slug:slug>/items/<path:external_id>/scores",
        "adjudication/studies/<slug:slug>/reports/",
        "adjudication/studies/<slug:slug>/validation/",
        "adjudication/studies/<slug:slug>/reports/raters/",
        "adjudication/exports/<int:pk>/download/",
        "adjudication/studies/<slug:slug>/exports/",
        "adjudication/studies/<slug:slug>/reports/agreement/<int:pool_id>/<slug:question>/",
        "adjudication/studies/<slug:slug>/pools/<int:pool_id>/agreement/",
    } <= opened[researcher.get_username()]


def test_exports_keep_hostile_text_exactly_but_neutralise_markup_in_the_card_and_formulas_in_csv(
    hostile_study, tmp_path
):
    import csv
    import json

    from adjudication.exports.writers import write_export

    study = hostile_study["study"]
    write_export(study=study, fmt="jsonl", out=tmp_path / "e.jsonl")
    records = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()[1:]]
    assert records[0]["question"] == HOSTILE and records[0]["system"] == HOSTILE  # data is kept exactly
    write_export(study=study, fmt="csv", out=tmp_path / "e.csv")
    with open(tmp_path / "e.csv", newline="") as f:
        cells = [c for row in csv.reader(f) for c in row]
    assert '\'=HYPERLINK("http://x","y")' in cells
    assert not [c for c in cells if c[:1] in ("=", "+", "@") or (c[:1] == "-" and not c[1:2].isdigit())]
    write_export(study=study, fmt="hf", out=tmp_path / "hf")
    for card in (tmp_path / "e.jsonl.card.md", tmp_path / "e.csv.card.md", tmp_path / "hf" / "README.md"):
        _assert_escaped(card.read_text(), card.name)
    import yaml

    front_matter = (tmp_path / "hf" / "README.md").read_text().split("---\n")[1]
    assert yaml.safe_load(front_matter)["pretty_name"] == HOSTILE  # escaped in the file, exact when read


# --- Filter parameters: named, never passed through as ORM lookups --------------------------------


def test_no_view_passes_query_parameters_into_an_orm_lookup():
    """Every view and API reads named query parameters; none spreads the query into filter/order_by."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    # A spread query (``filter(**request.GET)``), or a field name taken from the request (``order_by(query…)``).
    spread = re.compile(
        r"\.(filter|exclude|get|update|order_by|values|values_list|annotate)\(\s*\*\*\s*(dict\()?(request|query|params)\b"
    )
    field_from_request = re.compile(
        r"\.(order_by|values|values_list|only|defer|select_related|prefetch_related)\([^)]*(request\.|query\b|params\b)"
    )
    offenders = []
    for app in ("annotation", "adjudication", "scoring", "concord"):
        for path in (root / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if spread.search(line) or field_from_request.search(line):
                    offenders.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


@pytest.mark.django_db
def test_lookups_across_relations_in_the_query_string_are_ignored_by_the_apis(researcher, study):
    from tests import factories

    factories.make_item(study, "a1")
    run = ScoreRun.objects.create(
        study=study, metric="ra", metric_version="1", backend="lexical", created_by=researcher
    )
    api = APIClient()
    api.force_authenticate(researcher)
    plain = api.get(f"/api/scoring/runs/{run.pk}/scores/")
    hostile = api.get(
        f"/api/scoring/runs/{run.pk}/scores/",
        {"run__created_by__password__startswith": "m", "order_by": "run__created_by__password"},
    )
    assert plain.status_code == hostile.status_code == 200 and plain.json() == hostile.json()
    cases = api.get(f"/api/adjudication/studies/{study.slug}/cases/", {"status": "pool__study__owner__password"})
    assert cases.status_code in (200, 400) and (cases.status_code == 400 or cases.json() == [])


def test_the_pool_agreement_fragment_of_a_pool_with_two_raters_answers_200(client, researcher, hostile_study):
    # Found by the page crawl above: each-against-rest is not computed for two raters, and the
    # fragment's strict zip of raters and rows answered 500.
    client.force_login(researcher)
    study, pool = hostile_study["study"], hostile_study["imported"]
    response = client.get(f"/adjudication/studies/{study.slug}/pools/{pool.pk}/agreement/")
    assert response.status_code == 200
