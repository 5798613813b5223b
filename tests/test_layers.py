"""The layers (docs/architecture.md, "Layers" and "Calls that go up"): what import-linter cannot see.

``lint-imports`` (pyproject.toml) proves that annotation imports neither scoring nor adjudication, and that no
layer imports one above it. It cannot see a layer reaching up by name: a dotted path in a setting that annotation
imports with ``import_string``, ``apps.get_model("adjudication", …)``, ``reverse("adjudication:…")``, a table of
adjudication's in annotation's SQL, a ``{% url 'adjudication:…' %}`` in annotation's templates. These tests do:
each such name in a lower layer's code or in a setting it reads fails here; the templates' links up, the one kind
that remains, must each be listed in docs/architecture.md's "Calls that go up". They also hold the ways up that
replaced the names (the signal, the audited tables, the console links): declared by the app above, looked up by
the app below, refused when declared twice.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from annotation import audit
from annotation.console import links

ROOT = Path(__file__).resolve().parent.parent
APPS = ("annotation", "scoring", "adjudication")  # bottom to top; concord is below them all
# concord's composition modules wire the apps together and sit on top (docs/architecture.md, "Layers").
COMPOSITION = {"settings.py", "urls.py", "celery.py", "wsgi.py", "asgi.py"}


def _above(package: str) -> tuple[str, ...]:
    return APPS if package == "concord" else APPS[APPS.index(package) + 1 :]


def _naming(apps_above: tuple[str, ...]) -> re.Pattern[str]:
    """A whole string that names one of ``apps_above``: its label (``apps.get_model("adjudication", …)``), a dotted
    path (an import through a string, a Celery task sent by name), a URL name, a template path, or a table."""
    names = "|".join(apps_above)
    return re.compile(rf"^(?:{names})(?:[.:/_][\w.:/-]*)?$")


def _modules(package: str) -> Iterator[Path]:
    for path in sorted((ROOT / package).rglob("*.py")):
        if package == "concord" and path.parent == ROOT / "concord" and path.name in COMPOSITION:
            continue
        yield path


def _strings(path: Path) -> Iterator[tuple[int, str]]:
    """The string constants of a module, without its docstrings (prose may name the apps above)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


def _names_above(package: str) -> list[tuple[str, str]]:
    """(module, string) for each string of a package's modules that names an app above it, in order."""
    pattern = _naming(_above(package))
    return [
        (str(path.relative_to(ROOT)), value)
        for path in _modules(package)
        for _, value in sorted(_strings(path), key=lambda found: found[0])
        if pattern.match(value.strip())
    ]


# The names of an app above that remain in a lower layer's code, each listed in docs/architecture.md's "Calls
# that go up": a migration's dependency on adjudication's (the baseline records adjudication's gold labels).
REMAINING = {
    "annotation": [("annotation/migrations/0014_audit_baseline.py", "adjudication")],
}


@pytest.mark.parametrize("package", ["concord", "annotation", "scoring"])
def test_no_layer_names_a_layer_above_it_in_its_code(package):
    assert _names_above(package) == REMAINING.get(package, [])
    for module, _ in REMAINING.get(package, []):
        assert Path(module).stem in _calls_that_go_up(), f"{module} is not listed under 'Calls that go up'"


def test_the_scan_finds_a_name_of_an_app_above(tmp_path, monkeypatch):
    """The scan itself: each way of naming adjudication from annotation is found; prose and docstrings are not."""
    package = tmp_path / "annotation"
    package.mkdir()
    (package / "up.py").write_text(
        '"""Docstrings may say adjudication.services."""\n'
        'HANDLERS = ["adjudication.services.item_disagreements_detect"]\n'
        'MODEL = ("adjudication", "GoldLabel")\n'
        'URL = "adjudication:report-index"\n'
        'TABLE = "adjudication_goldlabel"\n'
        'TASK = "scoring.score_batch"\n'
        'PROSE = "Stable pseudonym used in exports and adjudication."\n'
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert [value for _, value in _names_above("annotation")] == [
        "adjudication.services.item_disagreements_detect",
        "adjudication",
        "adjudication:report-index",
        "adjudication_goldlabel",
        "scoring.score_batch",
    ]


# --- settings ------------------------------------------------------------------------------------------------


def _settings_read(package: str) -> set[str]:
    """The settings a package's modules read: ``settings.NAME`` and ``getattr(settings, "NAME", …)``."""
    read = set()
    for path in _modules(package):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "settings":
                read.add(node.attr)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "getattr"
                and len(node.args) >= 2
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == "settings"
                and isinstance(node.args[1], ast.Constant)
            ):
                read.add(node.args[1].value)
    return {name for name in read if name.isupper()}


def _settings_literals() -> dict[str, list[str]]:
    """Each setting of concord/settings.py with the strings its assignment spells out (its default, whatever
    the environment says at this moment)."""
    tree = ast.parse((ROOT / "concord" / "settings.py").read_text())
    literals: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            strings = [n.value for n in ast.walk(node.value) if isinstance(n, ast.Constant) and type(n.value) is str]
            for target in targets:
                if isinstance(target, ast.Name) and target.id.isupper():
                    literals.setdefault(target.id, []).extend(strings)
    return literals


def _strings_in(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings_in(key)
            yield from _strings_in(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _strings_in(item)


@pytest.mark.parametrize("package", ["concord", "annotation", "scoring"])
def test_no_setting_a_layer_reads_names_a_layer_above_it(package):
    """An import up through settings: a lower layer reads a setting whose value names a module of an app above it
    (as ASSIGNMENT_SUBMITTED_HANDLERS named adjudication's handlers for annotation to import)."""
    pattern = _naming(_above(package))
    literals = _settings_literals()
    found = []
    for name in sorted(_settings_read(package)):
        values = [*_strings_in(getattr(settings, name, None)), *literals.get(name, [])]
        found += [f"{name}: {value!r}" for value in values if pattern.match(value.strip())]
    assert found == []


def test_annotation_is_seen_reading_its_settings():
    """The settings check sees what annotation reads (the import limits, the audit anchor)."""
    read = _settings_read("annotation")
    assert {"IMPORT_MAX_BYTES", "AUDIT_ANCHOR_FILE", "GUIDELINES_MAX_CHARS"} <= read
    assert "ASSIGNMENT_SUBMITTED_HANDLERS" not in read and not hasattr(settings, "ASSIGNMENT_SUBMITTED_HANDLERS")


# --- import-linter sees every module --------------------------------------------------------------------------


def test_every_folder_of_python_modules_is_a_package_that_lint_imports_analyses():
    """import-linter builds its graph from packages: a folder of modules without ``__init__.py`` (a namespace
    package, as annotation/console was) is left out of it, and no contract checks what its modules import."""
    missing = [
        str(folder.relative_to(ROOT))
        for package in ("concord", *APPS)
        for folder in sorted({p.parent for p in (ROOT / package).rglob("*.py")})
        if "__pycache__" not in folder.parts and not (folder / "__init__.py").exists()
    ]
    assert missing == []


# --- templates: the links up that remain, each listed ---------------------------------------------------------

TEMPLATE_TAG = re.compile(r"{%\s*(\w+)\s+(.*?)%}", re.S)
QUOTED = re.compile(r"""["']([^"']+)["']""")


def _template_names_above(folder: str, apps_above: tuple[str, ...]) -> set[str]:
    """URL names, template paths and tag libraries of ``apps_above`` that the templates of ``folder`` use."""
    pattern = _naming(apps_above)
    found = set()
    for path in sorted((ROOT / "templates" / folder).rglob("*.html")):
        for tag, body in TEMPLATE_TAG.findall(path.read_text()):
            if tag == "load":
                found |= {f"{{% load {lib} %}}" for lib in body.split() if pattern.match(lib)}
            else:
                found |= {name for name in QUOTED.findall(body) if pattern.match(name)}
    return found


def _calls_that_go_up() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text()
    start = text.index("\n## Calls that go up\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def test_every_link_up_in_a_lower_layers_templates_is_listed_in_the_architecture():
    """annotation's pages link to adjudication's and scoring's pages by URL name. Each such name is a call up: it
    must be listed in docs/architecture.md's "Calls that go up", and every name listed there must still be used."""
    used = _template_names_above("annotation", ("scoring", "adjudication")) | _template_names_above(
        "scoring", ("adjudication",)
    )
    listed = set(re.findall(r"`((?:scoring|adjudication):[\w-]+)`", _calls_that_go_up()))
    assert used, "the scan finds the console's links to adjudication and scoring"
    assert sorted(used - listed) == [], "used in a lower layer's templates but not listed"
    assert sorted(listed - used) == [], "listed but no longer used"


def test_the_architecture_lists_each_way_up_by_name():
    section = _calls_that_go_up()
    for name in (
        "annotation.signals.assignment_submitted",
        "adjudication/apps.py",
        "audited_tables",
        "console_links",
        "register_gold_reader",
    ):
        assert name in section, name


# --- the ways up: declared above, looked up below -------------------------------------------------------------


def test_each_app_declares_its_own_audited_tables():
    """annotation audits its tables and Django's user tables; adjudication its own; annotation's list names no
    table of the apps above it (the code scan holds that too)."""
    by_app = {config.label: [spec.table for spec in getattr(config, "audited_tables", ())] for config in
              apps.get_app_configs()}
    own = {label: {model._meta.db_table for model in apps.get_app_config(label).get_models(include_auto_created=True)}
           for label in APPS}
    auth = {model._meta.db_table for model in apps.get_app_config("auth").get_models(include_auto_created=True)}
    assert set(by_app["annotation"]) <= own["annotation"] | auth
    assert set(by_app["adjudication"]) <= own["adjudication"]
    assert {"adjudication_goldlabel", "adjudication_consensusrule", "adjudication_bulkaction"} <= set(
        by_app["adjudication"]
    )
    assert [spec.table for spec in audit.audited_tables()] == [t for label in by_app for t in by_app[label]]


def test_a_table_two_apps_declare_is_refused(monkeypatch):
    config = apps.get_app_config("adjudication")
    monkeypatch.setattr(config, "audited_tables", (*config.audited_tables, audit.Audited("annotation_label")))
    with pytest.raises(ImproperlyConfigured, match="annotation_label is declared by both annotation and adjudication"):
        audit.audited_tables()


def test_console_links_are_the_ones_adjudication_declares():
    assert links.url_name("agreement-reports") == "adjudication:report-index"
    assert links.console_url("agreement-reports", slug="demo") == "/adjudication/studies/demo/reports/"


def test_without_an_app_that_serves_a_console_link_the_console_has_none(monkeypatch):
    monkeypatch.setattr(apps.get_app_config("adjudication"), "console_links", {})
    assert links.console_url("pool-agreement-fragment", slug="demo", pool_id=1) == ""


def test_a_console_link_declared_twice_or_of_no_known_role_is_refused(monkeypatch):
    monkeypatch.setattr(apps.get_app_config("scoring"), "console_links", {"agreement-reports": "scoring:runs"},
                        raising=False)
    with pytest.raises(ImproperlyConfigured, match="declared by scoring and adjudication"):
        links.url_name("agreement-reports")
    monkeypatch.setattr(apps.get_app_config("scoring"), "console_links", {"agreement-report": "scoring:runs"})
    with pytest.raises(ImproperlyConfigured, match="no known role"):
        links.url_name("agreement-reports")
    with pytest.raises(ValueError, match="takes"):
        links.console_url("agreement-reports", slug="demo", pool_id=1)
