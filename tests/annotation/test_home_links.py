"""The home page leads each role to its tools, and only to its tools."""

from django.urls import reverse

from annotation.models import Role
from tests import factories


def test_researcher_home_links_the_studys_console_scores_reports_and_exports(client, researcher, study):
    client.force_login(researcher)
    body = client.get(reverse("annotation:home")).content.decode()
    for name in (
        "console:study",
        "scoring:runs",
        "adjudication:report-index",
        "adjudication:exports",
        "adjudication:queue",
    ):
        assert reverse(name, args=[study.slug]) in body


def test_adjudicator_home_links_the_queue_but_not_the_researcher_tools(client, adjudicator, study):
    factories.grant(study, adjudicator, Role.ADJUDICATOR)
    client.force_login(adjudicator)
    body = client.get(reverse("annotation:home")).content.decode()
    assert reverse("adjudication:queue", args=[study.slug]) in body
    assert reverse("console:study", args=[study.slug]) not in body
    assert reverse("scoring:runs", args=[study.slug]) not in body


def test_annotator_home_shows_no_study_tools(client, annotator, study):
    pool = factories.make_pool(study, "clinicians")
    factories.add_member(pool, annotator)
    client.force_login(annotator)
    body = client.get(reverse("annotation:home")).content.decode()
    assert reverse("adjudication:queue", args=[study.slug]) not in body
    assert reverse("scoring:runs", args=[study.slug]) not in body
