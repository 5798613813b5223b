"""python manage.py export_study SLUG --format jsonl|csv|hf --out PATH

Writes the same export as the researcher's export page (recorded as an ExportJob without a user),
synchronously, with progress on stderr. For ``hf``, PATH is a folder (or a ``.zip``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from adjudication.exports.services import export_run
from adjudication.models import ExportFormat, ExportJob, ExportStatus
from annotation.models import Study


class Command(BaseCommand):
    help = "Export a study (labels, gold with provenance, scores) as JSONL, long CSV or a Hugging Face folder."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--format", dest="fmt", choices=ExportFormat.values, required=True)
        parser.add_argument("--out", required=True, help="file (jsonl, csv) or folder / .zip (hf)")

    def handle(self, *args, slug: str, fmt: str, out: str, **options) -> None:
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"no study with slug {slug!r}")
        target = Path(out).resolve()
        if fmt == "hf" and target.exists() and target.is_dir() and any(target.iterdir()):
            raise CommandError(f"{target} exists and is not empty; choose a new folder")
        job = ExportJob.objects.create(study=study, format=fmt)
        started = time.perf_counter()

        def report(done: int, total: int) -> None:
            sys.stderr.write(f"\r{done}/{total} items")

        try:
            job = export_run(job_id=job.pk, out=target, on_progress=report)
        except Exception as exc:
            raise CommandError(f"export failed: {exc}") from exc
        if job.status != ExportStatus.DONE:
            raise CommandError(f"export failed: {job.error}")
        sys.stderr.write("\n")
        elapsed = time.perf_counter() - started
        self.stdout.write(
            f"Exported {job.n_done} items of {study.slug} as {fmt} to {target} in {elapsed:.1f} s"
            + ("" if fmt == "hf" else f" (card: {target}.card.md)")
        )
