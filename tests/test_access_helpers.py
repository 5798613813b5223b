"""The access helpers themselves, called directly: which role each one lets through, and what everyone else
hears (404 "no such <thing>" to a stranger, an anonymous visitor and an unknown study alike; 403 with the
helper's own message to a member whose role is not enough). The route-level matrix (test_access_matrix.py)
checks the status codes pages and the API answer; these check the words and the roles returned."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, Permission

from annotation import access as study_access
from annotation.models import Role
from concord import access
from concord.errors import Forbidden, NotFound
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(study, researcher, annotator, adjudicator, stranger):
    factories.grant(study, annotator, Role.ANNOTATOR)
    factories.grant(study, adjudicator, Role.ADJUDICATOR)
    return {"researcher": researcher, "annotator": annotator, "adjudicator": adjudicator, "stranger": stranger}


def _refusal(call):
    with pytest.raises((NotFound, Forbidden)) as refused:
        call()
    return type(refused.value).__name__, refused.value.message


def test_study_roles_are_the_roles_held_in_that_study_only(study, people, researcher):
    other = factories.make_study(owner=researcher, slug="other-study")
    factories.grant(other, people["annotator"], Role.ADJUDICATOR)
    assert access.study_roles(people["annotator"], study.pk) == {"annotator"}
    assert access.study_roles(people["annotator"], other.pk) == {"adjudicator"}
    assert access.study_roles(researcher, study.pk) == {"researcher"}
    assert access.study_roles(people["stranger"], study.pk) == set()
    assert access.study_roles(researcher, None) == set()
    assert access.study_roles(AnonymousUser(), study.pk) == set()
    assert access.study_roles(object(), study.pk) == set()  # no user at all (no is_authenticated)


def test_require_role_lets_the_named_roles_through_and_tells_the_others_apart(study, people):
    assert access.require_role(people["researcher"], study, Role.RESEARCHER) == {"researcher"}
    assert access.require_role(people["annotator"], study.pk) == {"annotator"}  # any role; by id too
    assert access.require_role(people["adjudicator"], study, Role.ADJUDICATOR, Role.RESEARCHER) == {"adjudicator"}
    assert _refusal(lambda: access.require_role(people["annotator"], study, Role.RESEARCHER, Role.ADJUDICATOR)) == (
        "Forbidden",
        "your role in this study does not allow this (adjudicator, researcher only)",
    )
    assert _refusal(lambda: access.require_role(people["annotator"], study, Role.RESEARCHER)) == (
        "Forbidden",
        "your role in this study does not allow this (researcher only)",
    )
    for who in (people["stranger"], AnonymousUser()):
        assert _refusal(lambda who=who: access.require_role(who, study, Role.RESEARCHER)) == (
            "NotFound",
            "no such study",
        )
    assert _refusal(lambda: access.require_role(people["researcher"], None)) == ("NotFound", "no such study")
    assert _refusal(lambda: access.require_role(people["stranger"], study, what="pool")) == ("NotFound", "no such pool")


def test_an_object_named_by_its_id_is_not_found_by_everyone_without_the_role(study, people):
    assert access.require_object_role(people["adjudicator"], study, Role.ADJUDICATOR, what="case") == {"adjudicator"}
    assert access.require_object_role(people["researcher"], study.pk, Role.RESEARCHER, what="run") == {"researcher"}
    for who in ("annotator", "adjudicator", "stranger"):
        assert _refusal(
            lambda who=who: access.require_object_role(people[who], study, Role.RESEARCHER, what="run")
        ) == ("NotFound", "no such run")


def test_an_unknown_access_policy_is_refused_when_the_view_is_declared():
    with pytest.raises(ValueError, match=r"^unknown access policy 'owner'$"):
        access.access_policy("owner")

    @access.access_policy("researcher")
    def view():
        return "the view itself"

    assert (view.access_policy, view()) == ("researcher", "the view itself")


def test_the_study_helpers_let_researchers_and_adjudicators_through_with_their_own_refusals(study, people):
    researcher, annotator, adjudicator, stranger = (
        people[k] for k in ("researcher", "annotator", "adjudicator", "stranger")
    )
    assert [study_access.is_researcher(u, study) for u in (researcher, adjudicator, annotator, stranger)] == [
        True,
        False,
        False,
        False,
    ]
    assert [study_access.can_adjudicate(u, study) for u in (researcher, adjudicator, annotator, stranger)] == [
        True,
        True,
        False,
        False,
    ]
    assert study_access.is_researcher(AnonymousUser(), study) is False
    assert study_access.can_adjudicate(AnonymousUser(), study) is False
    assert study_access.require_researcher(researcher, study) == {"researcher"}
    assert study_access.require_adjudicator(adjudicator, study) == {"adjudicator"}
    assert study_access.get_study_for_researcher(researcher, study.slug) == study
    assert study_access.get_study_for_adjudicator(adjudicator, study.slug) == study
    assert study_access.get_study_for_adjudicator(researcher, study.slug) == study
    researchers_only = ("Forbidden", "only the study's researchers may do this")
    adjudicators_only = ("Forbidden", "only the study's adjudicators and researchers may do this")
    assert _refusal(lambda: study_access.require_researcher(adjudicator, study)) == researchers_only
    assert _refusal(lambda: study_access.get_study_for_researcher(annotator, study.slug)) == researchers_only
    assert _refusal(lambda: study_access.require_adjudicator(annotator, study)) == adjudicators_only
    assert _refusal(lambda: study_access.get_study_for_adjudicator(annotator, study.slug)) == adjudicators_only
    for call in (
        lambda: study_access.get_study_for_researcher(stranger, study.slug),
        lambda: study_access.get_study_for_researcher(researcher, "no-such-slug"),
        lambda: study_access.get_study_for_adjudicator(stranger, study.slug),
        lambda: study_access.get_study_for_adjudicator(adjudicator, "no-such-slug"),
        lambda: study_access.require_researcher(researcher, None),
        lambda: study_access.require_adjudicator(AnonymousUser(), study),
    ):
        assert _refusal(call) == ("NotFound", "no such study")


def test_creating_studies_is_granted_by_a_permission(researcher):
    anonymous = AnonymousUser()
    assert study_access.can_create_studies(anonymous) is False
    assert study_access.can_create_studies(researcher) is False
    assert _refusal(lambda: study_access.require_study_creator(researcher)) == (
        "Forbidden",
        "creating studies is granted by an administrator",
    )
    researcher.user_permissions.add(Permission.objects.get(codename="add_study", content_type__app_label="annotation"))
    creator = type(researcher).objects.get(pk=researcher.pk)  # permissions are cached per user object
    assert study_access.can_create_studies(creator) is True
    assert study_access.require_study_creator(creator) is None


def test_a_study_deleted_since_it_was_read_is_no_study(study, people):
    """A view holding a Study object whose row is gone (deleted meanwhile: Django sets its pk to None) answers
    404 like an unknown study, for every role, never an error."""
    study.delete()
    for who in ("researcher", "annotator"):
        assert _refusal(lambda who=who: access.require_role(people[who], study)) == ("NotFound", "no such study")
        assert _refusal(
            lambda who=who: access.require_object_role(people[who], study, Role.RESEARCHER, what="run")
        ) == ("NotFound", "no such run")
