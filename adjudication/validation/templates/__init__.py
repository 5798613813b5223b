"""The paper templates of a validation study, one module each, and their registry.

A template module holds ``INFO`` (its title, the metrics its runs may be, pool A's human measure, a hint
for the target question: what the wizard shows) and its runner, which takes a
:class:`adjudication.validation.figures.TemplateContext` and returns the study's analyses.

* :mod:`.astrid` — ASTRID: conversational faithfulness against an independent, blinded judgement.
* :mod:`.icat` — ICAT: coverage under the original and the expanded aspect set.
* :mod:`.pubhealth` — PubHealthBench: single-target against multi-label relevance.
* :mod:`.plainqafact` — PlainQAFact: explanation-only AUC, kind-aware against source-only.

A new template: a ``ValidationTemplate`` choice (a migration), a module here, and its two entries below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from adjudication.models import ValidationTemplate
from adjudication.validation.figures import TemplateContext
from adjudication.validation.templates import astrid, icat, plainqafact, pubhealth

TEMPLATE_INFO: dict[str, dict[str, Any]] = {
    ValidationTemplate.ASTRID: astrid.INFO,
    ValidationTemplate.ICAT: icat.INFO,
    ValidationTemplate.PUBHEALTH: pubhealth.INFO,
    ValidationTemplate.PLAINQAFACT: plainqafact.INFO,
}

TEMPLATE_RUNNERS: dict[str, Callable[[TemplateContext], list[dict[str, Any]]]] = {
    ValidationTemplate.ASTRID: astrid.run_astrid,
    ValidationTemplate.ICAT: icat.run_icat,
    ValidationTemplate.PUBHEALTH: pubhealth.run_pubhealth,
    ValidationTemplate.PLAINQAFACT: plainqafact.run_plainqafact,
}
