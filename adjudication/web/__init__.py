"""adjudication's pages and REST API, one package per area, each with ``views``, ``api`` and ``urls``:

* :mod:`.cases` — the adjudicator's queue, cases, proposed aspects, consensus rules, human measures.
* :mod:`.exports` — study exports and their downloads.
* :mod:`.reports` — agreement and validity reports and their bootstrap jobs.
* :mod:`.raters` — models as raters, backend comparison, outcome prediction and their jobs.
* :mod:`.validation` — validation studies.
* :mod:`.pool_agreement` — the console's "agreement so far" fragment.

:mod:`.urls` and :mod:`.api_urls` gather the areas' routes. Errors, htmx rendering and downloads go
through ``concord.http``; what adjudication adds on top is in :mod:`.common`.
"""
