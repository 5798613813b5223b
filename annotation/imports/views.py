"""The researcher's upload page: a file and a dry-run box; the answer is the error table or the summary."""

from __future__ import annotations

import os

from django import forms
from django.http import HttpRequest, HttpResponse

from annotation.access import get_study_for_researcher
from annotation.imports.service import items_import
from concord.access import access_policy
from concord.errors import DomainError
from concord.http import domain_errors, htmx_render, is_htmx


class ImportForm(forms.Form):
    file = forms.FileField(help_text="JSONL or CSV (optionally .gz) in the documented schema.")
    format = forms.ChoiceField(
        choices=[("", "From the file name"), ("jsonl", "JSONL"), ("csv", "CSV")], required=False,
    )
    dry_run = forms.BooleanField(required=False, initial=True, label="Dry run (check only, write nothing)")
    pool = forms.CharField(required=False, max_length=120, help_text="Pool of imported annotators (default: imported).")


@access_policy("researcher")
@domain_errors
def items_import_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    context: dict = {"study": study, "result": None, "error": None}
    status = 200
    if request.method == "POST":
        form = ImportForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                context["result"] = items_import(
                    study=study, file=upload, filename=os.path.basename(upload.name or "upload"), actor=request.user,
                    fmt=form.cleaned_data["format"] or None, dry_run=form.cleaned_data["dry_run"],
                    pool_name=form.cleaned_data["pool"] or None,
                )
            except DomainError as exc:
                context["error"] = exc
                status = exc.status_code
        else:
            status = 400
    else:
        form = ImportForm()
    context["form"] = form
    # htmx swaps only successful responses; the fragment itself says whether the import failed.
    return htmx_render(request, "annotation/import.html", context, fragment="annotation/_import_result.html",
                       status=200 if is_htmx(request) else status)
