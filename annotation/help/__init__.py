"""The user guide inside the app: docs/guide/*.md (and the import format reference) rendered at /help/
with the same sanitised Markdown as a study's guidelines."""
