"""Writing an export: JSONL, CSV (long format, with its scores in a CSV of their own) and a Hugging Face
``datasets`` folder, each with its card.

Every CSV goes through ``concord.csv_writer`` (the one CSV writer): a cell a spreadsheet would run as a
formula gets a leading ``'``. Files are written under a temporary name and moved into place at the end.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from adjudication.exports.card import CardTally, card_markdown
from adjudication.exports.filters import ExportFilters
from adjudication.exports.records import CHUNK, ExportContext, iter_records
from annotation.models import Item, Study
from concord.csv_writer import SafeCsvWriter, csv_writer

Progress = Callable[[int, int], None]


def _dumps(obj: Any) -> str:
    return orjson.dumps(obj, default=str).decode()


def _line(obj: Any) -> bytes:
    return orjson.dumps(obj, default=str, option=orjson.OPT_APPEND_NEWLINE)


def _hf_record(record: dict[str, Any]) -> dict[str, Any]:
    out = dict(record)
    out["metadata"] = _dumps(record["metadata"])
    out["labels"] = [{**lab, "value": _dumps(lab["value"])} for lab in record["labels"]]
    out["gold"] = [{**g, "value": _dumps(g["value"])} for g in record["gold"]]
    out["scores"] = [{**s, "details": _dumps(s["details"])} for s in record["scores"]]
    return out


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return _dumps(value)


CSV_COLUMNS = (
    "record", "item_id", "unit", "pool", "question", "annotator", "value", "version", "source",
    "item_question", "item_answer", "unit_text",
)
SCORE_CSV_COLUMNS = (
    "item_id", "unit", "run", "metric", "metric_version", "backend", "model_identity", "value", "state",
    "item_question", "item_answer", "unit_text",
)


def _unit_texts(record: dict[str, Any]) -> dict[str, str]:
    """The text each unit of a record stands for: its sentence, passage or aspect (the item: none, the
    answer has its own column)."""
    texts = {s["unit"]: s["text"] for s in record["sentences"]}
    texts.update((c["unit"], c["text"]) for c in record["contexts"])
    texts.update((a["unit"], a["text"]) for a in record["aspects"])
    return texts


def _write_csv_rows(record: dict[str, Any], writer: SafeCsvWriter) -> None:
    """Long format: one row per label and per gold version, each carrying the item's id, question and
    answer and the text of its unit, so that a spreadsheet needs no join."""
    texts = _unit_texts(record)
    item = (record["question"], record["answer"])
    for lab in record["labels"]:
        writer.writerow(
            (
                "label",
                record["id"],
                lab["unit"],
                lab["pool"],
                lab["question"],
                lab["annotator"],
                _cell(lab["value"]),
                str(lab["version"]),
                "annotator",
                *item,
                texts.get(lab["unit"], ""),
            )
        )
    for g in record["gold"]:
        writer.writerow(
            (
                "gold" if g["is_current"] else "gold_superseded",
                record["id"],
                g["unit"],
                g["pool"],
                g["question"],
                g["adjudicator"] or "",
                _cell(g["value"]),
                str(g["version"]),
                g["source"],
                *item,
                texts.get(g["unit"], ""),
            )
        )


def _write_score_rows(record: dict[str, Any], writer: SafeCsvWriter) -> None:
    """One row per score: the run's metric, version, backend and model, the value and its state."""
    texts = _unit_texts(record)
    for sc in record["scores"]:
        writer.writerow(
            (
                record["id"],
                sc["unit"],
                sc["run"],
                sc["metric"],
                sc["metric_version"],
                sc["backend"],
                sc["model_identity"] or "",
                "" if sc["value"] is None else repr(float(sc["value"])),
                sc["state"],
                record["question"],
                record["answer"],
                texts.get(sc["unit"], ""),
            )
        )


def write_stream(
    study: Study,
    fmt: str,
    stream: BinaryIO,
    *,
    progress: Progress | None = None,
    chunk: int = CHUNK,
    total: int | None = None,
    ctx: ExportContext | None = None,
    tally: CardTally | None = None,
    scores_stream: BinaryIO | None = None,
) -> int:
    """Write the records of ``study`` to an open binary stream (UTF-8); returns the items written.
    ``tally``, when given, sees every record written (for the card). ``ctx.filters`` limits the
    records; ``scores_stream`` (CSV only) receives the scores as their own CSV."""
    ctx = ctx or ExportContext(study)
    header = ctx.header()
    if total is None:
        total = Item.objects.filter(study=study).count()
    text = writer = score_text = score_writer = None
    if fmt == "jsonl":
        stream.write(_line(header))
    elif fmt == "csv":
        text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
        writer = csv_writer(text, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        if scores_stream is not None:
            score_text = io.TextIOWrapper(scores_stream, encoding="utf-8", newline="")
            score_writer = csv_writer(score_text, lineterminator="\n")
            score_writer.writerow(SCORE_CSV_COLUMNS)
    n = seen = 0
    for full in iter_records(study, chunk=chunk, ctx=ctx):
        seen += 1
        record = ctx.filters.apply(full)
        if record is not None:
            if tally is not None:
                tally.add(record)
            if fmt == "jsonl":
                stream.write(_line(record))
            elif fmt == "hf":
                stream.write(_line(_hf_record(record)))
            else:
                _write_csv_rows(record, writer)
                if score_writer is not None:
                    _write_score_rows(record, score_writer)
            n += 1
        if progress is not None and seen % chunk == 0:
            progress(seen, total)
    for wrapper in (text, score_text):
        if wrapper is not None:
            wrapper.flush()
            wrapper.detach()
    if progress is not None:
        progress(seen, total)
    return n


@contextlib.contextmanager
def _no_stream() -> Iterator[None]:
    yield None


def scores_path(out: Path | str) -> Path:
    """Where a CSV export's scores go: next to it, ``<out>.scores.csv``."""
    return Path(str(out) + ".scores.csv")


def write_export(
    *, study: Study, fmt: str, out: Path, progress: Progress | None = None, chunk: int = CHUNK,
    filters: ExportFilters | None = None,
) -> Path:
    """Write an export and its card to ``out``; the data lands under a temporary name first.

    ``jsonl`` / ``csv``: ``out`` is the data file, the card goes to ``<out>.card.md``; a CSV export's
    scores go to their own CSV, ``<out>.scores.csv``.
    ``hf``: ``out`` is a folder (``data/train.jsonl`` + ``README.md``), or a ``.zip`` of that folder.
    ``filters`` limit the export (gold only, chosen pools, chosen questions); the header and card say so.
    """
    out = Path(out)
    ctx = ExportContext(study, filters)
    tally = CardTally(ctx)
    total = Item.objects.filter(study=study).count()
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt in ("jsonl", "csv"):
        tmp = out.with_name(out.name + ".part")
        scores_tmp = scores_path(tmp)
        with open(tmp, "wb") as stream, (open(scores_tmp, "wb") if fmt == "csv" else _no_stream()) as scores:
            write_stream(study, fmt, stream, progress=progress, chunk=chunk, total=total, ctx=ctx, tally=tally,
                         scores_stream=scores)
        card = card_markdown(study, fmt=fmt, header=ctx.header(), tally=tally, yaml_header=False)
        Path(str(out) + ".card.md").write_text(card, encoding="utf-8")
        if fmt == "csv":
            os.replace(scores_tmp, scores_path(out))
        os.replace(tmp, out)
        return out
    if fmt != "hf":
        raise ValueError(f"unknown export format {fmt!r}")
    workdir = Path(tempfile.mkdtemp(prefix="concord-hf-", dir=out.parent))
    try:
        (workdir / "data").mkdir()
        with open(workdir / "data" / "train.jsonl", "wb") as stream:
            write_stream(study, "hf", stream, progress=progress, chunk=chunk, total=total, ctx=ctx, tally=tally)
        header = ctx.header()
        (workdir / "README.md").write_text(
            card_markdown(study, fmt="hf", header=header, tally=tally, yaml_header=True), encoding="utf-8"
        )
        (workdir / "concord_export.json").write_text(_dumps(header), encoding="utf-8")
        if out.suffix == ".zip":
            tmp = out.with_name(out.name + ".part")
            with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
                for path in sorted(workdir.rglob("*")):
                    if path.is_file():
                        archive.write(path, path.relative_to(workdir).as_posix())
            os.replace(tmp, out)
        else:
            if out.exists():
                shutil.rmtree(out)
            workdir.rename(out)
    finally:
        if workdir.exists():
            shutil.rmtree(workdir)
    return out
