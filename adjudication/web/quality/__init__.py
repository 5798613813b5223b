"""Per-annotator quality statistics (docs/guide/quality.md): the researcher's page and the REST API."""
