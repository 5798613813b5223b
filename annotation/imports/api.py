"""REST endpoint for imports: the same service as the upload page and the import_items command."""

from __future__ import annotations

import os

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import get_study_for_researcher
from annotation.imports.service import items_import


class ItemsImportApi(APIView):
    """POST a JSONL or CSV file as multipart ``file``; 201 with the counts, or 400 with every error
    (``details``: ``{location, line|row, field, reason}``) and nothing written; 413 over the size, line or
    time limit (IMPORT_MAX_BYTES, IMPORT_MAX_LINES, IMPORT_MAX_SECONDS)."""

    access_policy = "researcher"
    parser_classes = [MultiPartParser]

    class InputSerializer(serializers.Serializer):
        file = serializers.FileField()
        format = serializers.ChoiceField(choices=["jsonl", "csv"], required=False)
        dry_run = serializers.BooleanField(required=False, default=False)
        pool = serializers.CharField(required=False, max_length=120)

        class Meta:
            ref_name = "ItemsImportIn"

    @extend_schema(
        operation_id="items_import",
        request={"multipart/form-data": InputSerializer},
        responses=dict.fromkeys((200, 201), inline_serializer("ItemsImportOut", {
            "filename": serializers.CharField(), "dry_run": serializers.BooleanField(),
            "adapter": serializers.CharField(allow_blank=True), "items": serializers.IntegerField(),
            "sentences": serializers.IntegerField(), "chunks": serializers.IntegerField(),
            "aspects": serializers.IntegerField(), "labels": serializers.IntegerField(),
            "annotators": serializers.IntegerField(), "pool": serializers.CharField(allow_blank=True),
            "batch_id": serializers.IntegerField(allow_null=True),
        })),
    )
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        result = items_import(
            study=study, file=upload, filename=os.path.basename(upload.name or "upload"), actor=request.user,
            fmt=data.validated_data.get("format"), dry_run=data.validated_data["dry_run"],
            pool_name=data.validated_data.get("pool"),
        )
        return Response(result.as_dict(), status=status.HTTP_200_OK if result.dry_run else status.HTTP_201_CREATED)
