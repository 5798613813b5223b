"""The data manager's page as a researcher reads it: the filter's labels are words."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_the_pool_state_filter_reads_as_words(client, researcher, study):
    client.force_login(researcher)
    page = client.get(reverse("adjudication:data-manager", args=[study.slug])).content.decode()
    options = page.split('id="dm-pool-state"')[1].split("</select>")[0]
    assert '<option value="not_assigned">Not assigned</option>' in options  # was "Notassigned"
    for value, label in (("open", "Open"), ("done", "Done"), ("skipped", "Skipped"), ("withdrawn", "Withdrawn")):
        assert f'<option value="{value}">{label}</option>' in options
    selected = client.get(reverse("adjudication:data-manager", args=[study.slug]), {"pool_state": "not_assigned"})
    assert '<option value="not_assigned" selected>Not assigned</option>' in selected.content.decode()
