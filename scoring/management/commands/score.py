"""Score a JSONL file in the import schema without creating a study.

    python manage.py score FILE --metric NAME --backend NAME [--param k=v ...] --out OUT.jsonl

Each record (``id``, ``question``, ``answer``, and optionally ``contexts``, ``source``, ``aspects``,
``scope`` — see annotation/imports/) is segmented with the import's segmenter and scored as an
``ItemInput``; one JSON object per item is written: ``{"id", "metric", "backend", "value", "state",
"details"}``. ``value``/``state`` are the item-level score; the per-unit scores are in
``details["units"]``. Bad input stops before anything is scored and names the line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation import units
from annotation.segmentation import split_sentences
from scoring.backends import get_backend
from scoring.metrics import ITEM, AspectInput, ChunkInput, ItemInput, MetricError, UnitScore, get_metric, score_item
from scoring.retrieval import HybridRetriever
from scoring.selectors import target_ids
from scoring.services import prepare_backend, unit_key

_SCOPES = {"emergency", "in_scope", "out_of_scope", "non_clinical"}
_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}
PREPARE_EVERY = 256  # items whose texts are encoded together before scoring them one by one


class RecordError(ValueError):
    pass


def _string(rec: dict[str, Any], name: str, *, required: bool = False) -> str:
    value = rec.get(name)
    if value is None:
        if required:
            raise RecordError(f"field {name!r} is required")
        return ""
    if name == "id" and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise RecordError(f"field {name!r} must be a string")
    if required and not value.strip():
        raise RecordError(f"field {name!r} must not be empty")
    return value


def record_to_input(rec: Any) -> ItemInput:
    """An ItemInput from one import-schema record (the same fields and rules as the importer)."""
    if not isinstance(rec, dict):
        raise RecordError("expected a JSON object")
    external_id = _string(rec, "id", required=True).strip()
    answer = _string(rec, "answer", required=True)
    source = _string(rec, "source")
    scope = _string(rec, "scope")
    if scope and scope not in _SCOPES:
        raise RecordError(f"field 'scope': {scope!r} is not one of {', '.join(sorted(_SCOPES))}")
    contexts = []
    raw_contexts = rec.get("contexts") or []
    if not isinstance(raw_contexts, list):
        raise RecordError("field 'contexts' must be a list")
    for rank, ctx in enumerate(raw_contexts, start=1):
        if isinstance(ctx, str):
            contexts.append(ChunkInput(rank=rank, text=ctx, unit_key=units.chunk(rank)))
        elif isinstance(ctx, dict) and isinstance(ctx.get("text"), str):
            contexts.append(ChunkInput(rank=rank, text=ctx["text"], document_id=str(ctx.get("id") or ""),
                                       is_target=bool(ctx.get("is_target", False)), unit_key=units.chunk(rank)))
        else:
            raise RecordError(f"field 'contexts': item {rank} must be a string or an object with 'text'")
    aspects = []
    raw_aspects = rec.get("aspects") or []
    if not isinstance(raw_aspects, list):
        raise RecordError("field 'aspects' must be a list")
    for i, aspect in enumerate(raw_aspects):
        if isinstance(aspect, str):
            aspects.append(AspectInput(ref=i, text=aspect))
        elif isinstance(aspect, dict) and isinstance(aspect.get("text"), str):
            importance = aspect.get("importance", "must_have")
            if importance not in ("must_have", "nice_to_have"):
                raise RecordError(f"field 'aspects': item {i} has importance {importance!r}")
            aspects.append(AspectInput(ref=i, text=aspect["text"], importance=importance))
        else:
            raise RecordError(f"field 'aspects': item {i} must be a string or an object with 'text'")
    return ItemInput(
        id=external_id,
        question=_string(rec, "question", required=True),
        answer=answer,
        sentences=[s.text for s in split_sentences(answer)],
        contexts=contexts,
        source=source,
        source_sentences=[s.text for s in split_sentences(source)] if source else [],
        aspects=aspects,
        scope_class=scope,
        target_ids=target_ids(rec.get("metadata")),
    )


def read_inputs(path: Path) -> list[ItemInput]:
    inputs: list[ItemInput] = []
    seen: set[str] = set()
    errors: list[str] = []
    with path.open(encoding="utf-8-sig") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                item = record_to_input(json.loads(line))
            except json.JSONDecodeError as exc:
                errors.append(f"line {number}: malformed JSON ({exc.msg})")
                continue
            except RecordError as exc:
                errors.append(f"line {number}: {exc}")
                continue
            if item.id in seen:
                errors.append(f"line {number}: id {item.id!r} appears twice")
            seen.add(item.id)
            inputs.append(item)
    if errors:
        raise CommandError("nothing scored; fix these lines:\n" + "\n".join(errors[:50]))
    return inputs


def item_row(item_id: str, metric: str, backend: str, scores: list[UnitScore]) -> dict[str, Any]:
    top = next((u for u in scores if u.unit == ITEM), None)
    others = [
        {"unit": unit_key(u.unit), "value": u.value, "state": u.state, "details": u.details}
        for u in scores
        if u is not top
    ]
    details = dict(top.details) if top else {}
    if others:
        details["units"] = others
    if top is None:
        return {"id": item_id, "metric": metric, "backend": backend, "value": None, "state": "undetermined",
                "details": {**details, "reason": "the metric scores no item-level unit"}}
    return {
        "id": item_id, "metric": metric, "backend": backend, "value": top.value, "state": top.state, "details": details
    }


class Command(BaseCommand):
    help = "Score a JSONL file in the import schema with one metric and backend, without creating a study."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--metric", required=True)
        parser.add_argument("--backend", required=True)
        parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
        parser.add_argument("--backend-option", action="append", default=[], metavar="KEY=VALUE")
        parser.add_argument("--knowledge-base", type=int, help="id of a knowledge base to retrieve from")
        parser.add_argument("--alpha", type=float, default=0.5, help="hybrid retrieval weight of the dense ranking")
        parser.add_argument("--out", required=True, type=Path)

    @staticmethod
    def _pairs(values: list[str], what: str) -> dict[str, str]:
        out = {}
        for pair in values:
            key, sep, value = pair.partition("=")
            if not sep or not key.strip():
                raise CommandError(f"{what} {pair!r} is not KEY=VALUE")
            out[key.strip()] = value
        return out

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        try:
            metric = get_metric(options["metric"])
            raw = self._pairs(options["param"], "--param")
            for key, value in list(raw.items()):
                spec = metric.parameters.get(key)
                if spec is not None and spec.type is bool:
                    if value.lower() not in _TRUE | _FALSE:
                        raise MetricError(f"{metric.name}: parameter {key}={value!r} is not true/false")
                    raw[key] = value.lower() in _TRUE
            params = metric.resolve_params(raw)
            if options["backend"] not in metric.backends:
                raise MetricError(
                    f"{metric.name} cannot use the {options['backend']!r} backend; "
                    f"allowed: {', '.join(metric.backends)}"
                )
        except MetricError as exc:
            raise CommandError(str(exc)) from None
        inputs = read_inputs(path)
        try:
            backend = get_backend(options["backend"], **self._pairs(options["backend_option"], "--backend-option"))
        except MetricError as exc:
            raise CommandError(f"the {options['backend']} backend is unavailable: {exc}") from None
        retriever = None
        if options["knowledge_base"] is not None:
            embedder = get_backend("embedding")
            retriever = HybridRetriever(knowledge_base_id=options["knowledge_base"], encode=embedder.encode,
                                        identity=embedder.identity, alpha=options["alpha"])
        counts = {"ok": 0, "undetermined": 0, "failed": 0}
        with options["out"].open("w", encoding="utf-8") as out:
            for start in range(0, len(inputs), PREPARE_EVERY):
                chunk = inputs[start : start + PREPARE_EVERY]
                prepare_backend(backend, chunk)
                for item in chunk:
                    try:
                        scores = score_item(metric, item, backend, params, retriever=retriever, final_attempt=True)
                    except MetricError as exc:
                        raise CommandError(
                            f"{metric.name} with the {options['backend']} backend cannot run: {exc}"
                        ) from None
                    except Exception as exc:
                        scores = [UnitScore(ITEM, None, "failed", {"error": f"{type(exc).__name__}: {exc}"})]
                    row = item_row(item.id, metric.name, options["backend"], scores)
                    counts[row["state"]] += 1
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
        self.stdout.write(
            f"scored {len(inputs)} items with {metric.name} v{metric.version} / "
            f"{getattr(backend, 'identity', options['backend'])}: "
            f"{counts['ok']} ok, {counts['undetermined']} undetermined, {counts['failed']} failed → {options['out']}"
        )
