"""Links from the researcher console to pages that apps above annotation serve.

annotation never imports the apps above it, nor names their routes (docs/architecture.md, "Calls that go up"):
an app that serves a page the console links to declares it in its AppConfig's ``console_links``, a mapping
from one of the roles below to its URL name. The console asks for a role. A role that no installed app
declares has no link, and the page says so instead of linking; a declared URL name that does not reverse
with the role's arguments raises (a broken declaration is a programming error, not a missing link).
"""

from __future__ import annotations

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

# role -> the URL keyword arguments the console passes.
ROLES: dict[str, tuple[str, ...]] = {
    # A pool's agreement so far, loaded into the progress page over htmx.
    "pool-agreement-fragment": ("slug", "pool_id"),
    # The index of a study's reports.
    "agreement-reports": ("slug",),
    # The agreement report of one question of one pool.
    "question-agreement-report": ("slug", "pool_id", "question"),
}


def url_name(role: str) -> str:
    """The URL name the installed apps declare for ``role``; "" when none does."""
    if role not in ROLES:
        raise ValueError(f"unknown console link role {role!r}")
    declared = []
    for config in apps.get_app_configs():
        links = getattr(config, "console_links", {})
        unknown = sorted(set(links) - set(ROLES))
        if unknown:
            raise ImproperlyConfigured(f"{config.label} declares console links of no known role: {unknown}")
        if role in links:
            declared.append((config.label, links[role]))
    if len(declared) > 1:
        raise ImproperlyConfigured(
            f"the console link {role!r} is declared by {' and '.join(label for label, _ in declared)}"
        )
    return declared[0][1] if declared else ""


def console_url(role: str, **kwargs: object) -> str:
    """The URL of the page that fills ``role``, reversed with ``kwargs``; "" when no installed app serves one."""
    if set(kwargs) != set(ROLES.get(role, ())):
        raise ValueError(f"the console link {role!r} takes {ROLES.get(role)}, not {sorted(kwargs)}")
    name = url_name(role)
    return reverse(name, kwargs=kwargs) if name else ""
