"""The dataset card of an export (``README.md`` of the ``hf`` folder, ``<file>.card.md`` next to a JSONL or
CSV file): counts, pools, blinding settings, the agreement table, gold provenance, score runs and the
licence.

The agreement table costs no second read of the labels: :class:`CardTally` sees every record as it is
written and keeps the answer patterns.
"""

from __future__ import annotations

import io
import json
import re
from collections import Counter, defaultdict
from typing import Any

from adjudication.consensus import canonical
from adjudication.exports.filters import ExportFilters
from adjudication.exports.records import FORMAT_VERSION, ExportContext
from adjudication.models import GoldSource
from adjudication.stats import pattern_agreement as pa
from annotation.models import Question, Study


class CardTally:
    """Counts and agreement patterns gathered while the records stream past, so the card costs no
    second read of the labels. A unit's pattern is its submitted answers (canonical forms, sorted);
    percent agreement, Fleiss' κ and Krippendorff's α do not depend on which rater gave which answer
    within a unit, so the distinct patterns with their unit counts are all the statistics need —
    a handful of entries however many units."""

    def __init__(self, ctx: ExportContext) -> None:
        self.ctx = ctx
        self.kinds = {q.key: q.kind for q in ctx.questions.values()}
        self.counts: Counter[str] = Counter()
        # The provenance of the current gold written, so that a limited export's card describes its own gold.
        self.gold_sources: Counter[str] = Counter()
        self.patterns: dict[tuple[str, str], Counter[tuple]] = defaultdict(Counter)

    def add(self, record: dict[str, Any]) -> None:
        counts = self.counts
        counts["items"] += 1
        counts["labels"] += len(record["labels"])
        counts["gold_versions"] += len(record["gold"])
        counts["gold_current"] += sum(1 for g in record["gold"] if g["is_current"])
        self.gold_sources.update(g["source"] for g in record["gold"] if g["is_current"])
        counts["cases"] += len(record["cases"])
        counts["scores"] += len(record["scores"])
        submitted = {(a["pool"], a["annotator"]) for a in record["assignments"] if a["status"] == "submitted"}
        units: dict[tuple[str, str, str], list] = defaultdict(list)
        for label in record["labels"]:
            kind = self.kinds[label["question"]]
            if label["value"] is None or kind == "text" or (label["pool"], label["annotator"]) not in submitted:
                continue
            units[(label["pool"], label["question"], label["unit"])].append(canonical(kind, label["value"]))
        for (pool, question, _unit), values in units.items():
            self.patterns[(pool, question)][tuple(sorted(values, key=repr))] += 1

    def summary(self) -> dict[str, int]:
        keys = ("items", "labels", "gold_current", "gold_versions", "cases", "scores")
        out = {key: self.counts.get(key, 0) for key in keys}
        pools = self.ctx.filters.pools
        out["annotators"] = len(
            {user_id for pool_id, user_id in self.ctx.pseudonyms if not pools or self.ctx.pools[pool_id].name in pools}
        )
        return out

    def agreement(self) -> list[dict[str, Any]]:
        """Per pool and question: percent agreement, Fleiss' κ and Krippendorff's α over submitted
        labels, before any consensus, from the answer patterns (adjudication.stats.pattern_agreement)."""
        rows: list[dict[str, Any]] = []
        pools, questions = self.ctx.filters.pools, self.ctx.filters.questions
        for pool in sorted(self.ctx.pools.values(), key=lambda p: p.name):
            if pools and pool.name not in pools:
                continue
            for question in sorted(pool.questions.all(), key=lambda q: (q.order, q.pk)):
                if questions and question.key not in questions:
                    continue
                row: dict[str, Any] = {"pool": pool.name, "question": question.key, "kind": question.kind}
                rows.append(row)
                if question.kind == "text":
                    row["note"] = "free text: agreement statistics do not apply"
                    continue
                if self.ctx.filters.gold_only:
                    row["note"] = "labels not in this export (gold only)"
                    continue
                scale = question.option_values if question.is_categorical else None
                patterns = _pattern_codes(self.patterns.get((pool.name, question.key), Counter()), question, scale)
                if not patterns:
                    row["note"] = "no submitted labels"
                    continue
                agreement = pa.percent_agreement(patterns)
                row["n_units"] = agreement.n_units
                row["percent_agreement"] = agreement.value
                if question.is_categorical:
                    level = "ordinal" if question.kind == "ordinal" else "nominal"
                    row["fleiss_kappa"] = pa.fleiss_kappa(patterns, len(scale)).value
                    row["krippendorff_alpha"] = pa.krippendorff_alpha(patterns, level, len(scale)).value
                    row["alpha_level"] = level
                elif question.kind == "number":
                    row["krippendorff_alpha"] = pa.krippendorff_alpha(patterns, "interval").value
                    row["alpha_level"] = "interval"
                else:
                    row["note"] = "exact set equality; κ and α over sets are not reported"
        return rows


def _pattern_codes(
    patterns: Counter[tuple], question: Question, scale: list[str] | None
) -> list[tuple[list[float], int]]:
    """Answer patterns as codes: scale positions (categorical), numbers, or one id per distinct set."""
    position = {v: i for i, v in enumerate(scale)} if scale is not None else None
    seen_sets: dict[Any, int] = {}
    out = []
    for pattern, count in sorted(patterns.items(), key=lambda kv: repr(kv[0])):
        if position is not None:
            codes = [float(position[v]) for v in pattern if v in position]
        elif question.kind == "number":
            codes = [float(v) for v in pattern]
        else:
            codes = [float(seen_sets.setdefault(v, len(seen_sets))) for v in pattern]
        if codes:
            out.append((codes, count))
    return out



def _fmt(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


# An ampersand that would start a character reference ("&lt;", "&#60;"): the only one that needs escaping.
_REFERENCE = re.compile(r"&(?=#?\w+;)")


def _text(value: Any) -> str:
    """User-written text as Markdown text: no tag and no character reference that a renderer would
    interpret (Markdown renderers pass raw HTML through), while a plain "&" stays "&" ("Q&A", not
    "Q&amp;A") for whoever reads the file as text."""
    return _REFERENCE.sub("&amp;", str(value)).replace("<", "&lt;").replace(">", "&gt;")


def _md(value: Any) -> str:
    """User-written text for a line or a table cell of the card: as ``_text``, and no pipe or line
    break that would split a table row."""
    return _text(value).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def card_markdown(study: Study, *, fmt: str, header: dict[str, Any], tally: CardTally, yaml_header: bool) -> str:
    counts = tally.summary()
    agreement_rows = tally.agreement()
    gold_sources = tally.gold_sources
    out = io.StringIO()
    if yaml_header:
        out.write("---\n")
        # YAML reads \u escapes in a double-quoted string: the name stays exact and no raw tag is written.
        pretty = json.dumps(study.name).replace("<", "\\u003c").replace(">", "\\u003e")
        out.write(f"pretty_name: {pretty}\n")
        out.write("license: other\n")
        out.write("language:\n- en\n")
        out.write("tags:\n- concord\n- annotation\n- rag-evaluation\n")
        out.write("configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/train.jsonl\n")
        out.write("---\n\n")
    out.write(f"# {_md(study.name)} — Concord export\n\n")
    out.write(
        f"Exported {header['exported_at']} from study `{study.slug}` as `{fmt}` (format version {FORMAT_VERSION}).\n\n"
    )
    if header.get("filters"):
        limited = ExportFilters.from_dict(header["filters"]).describe()
        out.write(f"**Limited to {_md(limited)}**: this is not the whole study, and it cannot rebuild it.\n\n")
    if fmt == "csv":
        out.write("The scores are in their own CSV next to this file (`<file>.scores.csv`).\n\n")
    out.write("## Licence and attribution\n\n")
    out.write(
        (
            _text(study.licence.strip())
            or "No licence was recorded for the imported data; ask the study owner before reuse."
        )
        + "\n\n"
    )
    out.write("## Counts\n\n| what | n |\n|---|---|\n")
    for key, value in counts.items():
        out.write(f"| {key.replace('_', ' ')} | {value} |\n")
    out.write("\n## Pools\n\n| pool | overlap k | members | questions | majority rule |\n|---|---|---|---|---|\n")
    for pool in header["pools"]:
        out.write(
            f"| {_md(pool['name'])} | {pool['overlap']} | {len(pool['members'])} | "
            f"{_md(', '.join(pool['questions']))} | "
            f"{_md(', '.join(pool['majority_rule'])) or '—'} |\n"
        )
    s = header["study"]
    out.write("\n## Blinding\n\n")
    out.write(f"- System name hidden from annotators: {'yes' if s['blind_system'] else 'no'}\n")
    out.write(f"- Metadata fields hidden from annotators: {_md(', '.join(s['hidden_metadata_fields'])) or 'none'}\n")
    visible = ", ".join(s.get("visible_metadata_fields") or [])
    out.write(f"- Metadata fields shown to annotators (all others hidden): {_md(visible) or 'none'}\n")
    out.write(f"- Independent pools (an annotator in at most one pool): {'yes' if s['independent_pools'] else 'no'}\n")
    out.write(f"- Automated scores shown to adjudicators: {'yes' if s['show_scores_to_adjudicators'] else 'no'}\n")
    for pool in header["pools"]:
        out.write(f"- Pool {_md(pool['name'])}: annotators see {pool['visibility'].replace('_', ' ')}\n")
    out.write("- Annotators appear under stable per-pool pseudonyms; adjudicators under their usernames.\n")
    out.write("\n## Agreement (before consensus; submitted labels)\n\n")
    out.write("| pool | question | kind | n units | percent agreement | Fleiss κ | Krippendorff α | note |\n")
    out.write("|---|---|---|---|---|---|---|---|\n")
    for row in agreement_rows:
        alpha = row.get("krippendorff_alpha")
        alpha_text = f"{_fmt(alpha)} ({row['alpha_level']})" if "alpha_level" in row else "—"
        out.write(
            f"| {_md(row['pool'])} | {_md(row['question'])} | {row['kind']} | {row.get('n_units', '—')} | "
            f"{_fmt(row['percent_agreement']) if 'percent_agreement' in row else '—'} | "
            f"{_fmt(row['fleiss_kappa']) if 'fleiss_kappa' in row else '—'} | {alpha_text} | "
            f"{_md(row.get('note', ''))} |\n"
        )
    out.write("\n## Gold provenance (current versions)\n\n| source | n |\n|---|---|\n")
    for source in GoldSource.values:
        out.write(f"| {source} | {gold_sources.get(source, 0)} |\n")
    out.write(
        "\nUnanimous: every submitted annotator gave the same answer (sets compared exactly; text after whitespace "
        "normalisation). Majority: a strict majority of at least three, where the pool's rule allows it. "
        "Adjudicated / unresolved: an adjudicator's decision, with rationale, confidence (1–5) and guideline-gap flag. "
        "Every earlier version is kept in the `gold` list with `is_current: false`.\n"
    )
    out.write("\n## Score runs\n\n| run | metric | version | backend | model |\n|---|---|---|---|---|\n")
    for run in header["score_runs"]:
        out.write(
            f"| {run['run']} | {_md(run['metric'])} | {_md(run['metric_version'])} | {_md(run['backend'])} | "
            f"{_md(run['model_identity']) or '—'} |\n"
        )
    out.write(
        "\n## Record layout\n\nOne record per item: `id`, `question`, `answer`, `source`, `scope`, `system`, "
        "`metadata`, `sentences`, `contexts`, `aspects` (origin, status, version), `assignments`, `labels` (pool, "
        "annotator pseudonym, question, unit, value, version), `gold` (all versions with provenance), `cases`, "
        "`scores` (run, metric, metric_version, backend, model_identity, unit, value, state, details). "
        "Units: `item`, `s:<i>` answer sentence, `src:<i>` source sentence, `c:<rank>` chunk, "
        "`a:<i>` the i-th entry of `aspects`.\n"
    )
    if fmt == "hf":
        out.write(
            "In this folder the free-form JSON fields (`metadata`, label and gold `value`, score `details`) are "
            "JSON-encoded strings, so that every column has one Arrow type; decode them with `json.loads`.\n"
        )
    if fmt == "csv":
        out.write(
            "The CSV is long format (`record, item_id, unit, pool, question, annotator, value, version, source`); "
            "non-text values are JSON. Cells beginning with = + - @ (or a tab / carriage return) are prefixed with ' "
            "so that spreadsheets do not run them as formulas.\n"
        )
    return out.getvalue()

