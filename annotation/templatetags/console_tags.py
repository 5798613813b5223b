"""Template filters of the page header."""

from __future__ import annotations

from functools import cache
from typing import Any

from django import template
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType

from annotation.models import Role, StudyRole
from concord import rawsql

register = template.Library()

_ADD_STUDY = ("add_study", "annotation")  # codename, app label


@cache
def _console_sql() -> str:
    """One statement, three indexed EXISTS: a researcher role in any study, or ``annotation.add_study`` held
    directly or through a group. Table and column names come from the models' metadata. (The same test
    through the ORM's joins cost a few milliseconds of query building and planning on every page.)"""
    user_model = get_user_model()
    user_perms = user_model._meta.get_field("user_permissions").remote_field.through._meta
    user_groups = user_model._meta.get_field("groups").remote_field.through._meta
    group_perms = Group._meta.get_field("permissions").remote_field.through._meta
    perm, ct, role = Permission._meta, ContentType._meta, StudyRole._meta

    def col(meta: Any, name: str) -> str:
        return f'"{meta.get_field(name).column}"'

    def named(permission: str) -> str:  # joins the permission, its codename and app label the next parameters
        return (
            f'JOIN "{perm.db_table}" p ON p."id" = {permission} '
            f'JOIN "{ct.db_table}" ct ON ct."id" = p.{col(perm, "content_type")} '
            f'WHERE p.{col(perm, "codename")} = %s AND ct.{col(ct, "app_label")} = %s'
        )

    # Names from the models' metadata; every value is a parameter.
    researcher = (
        f'SELECT 1 FROM "{role.db_table}" r WHERE r.{col(role, "user")} = %s '  # noqa: S608
        f'AND r.{col(role, "role")} = %s'
    )
    direct = (
        f'SELECT 1 FROM "{user_perms.db_table}" up {named("up." + col(user_perms, "permission"))} '  # noqa: S608
        f'AND up.{col(user_perms, "user")} = %s'
    )
    grouped = (
        f'SELECT 1 FROM "{user_groups.db_table}" ug JOIN "{group_perms.db_table}" gp '  # noqa: S608
        f'ON gp.{col(group_perms, "group")} = ug.{col(user_groups, "group")} '
        f'{named("gp." + col(group_perms, "permission"))} AND ug.{col(user_groups, "user")} = %s'
    )
    return f"SELECT EXISTS ({researcher}) OR EXISTS ({direct}) OR EXISTS ({grouped})"


@register.filter
def shows_console(user: Any) -> bool:
    """Whether the header links the researcher console: to a researcher of some study, or to someone
    allowed to create studies (``annotation.add_study``, as ``annotation.access.can_create_studies``);
    annotators and adjudicators never see it (the console would refuse them). One query, once per
    request's user object."""
    if not getattr(user, "is_authenticated", False):
        return False
    cached = getattr(user, "_concord_shows_console", None)
    if cached is None:
        if user.is_superuser and user.is_active:
            cached = True
        else:
            with rawsql.cursor() as cursor:
                cursor.execute(_console_sql(), [user.pk, Role.RESEARCHER, *_ADD_STUDY, user.pk, *_ADD_STUDY, user.pk])
                cached = bool(cursor.fetchone()[0])
        user._concord_shows_console = cached
    return bool(cached)
