"""Reports over the database, as plain data.

* :mod:`.access` — which pools and questions of a study a report may read.
* :mod:`.loading` — the labels of a pool as a units × raters matrix, the metric sources (score runs,
  human measures) and the human targets; the only raw SQL of the reports lives here.
* :mod:`.params` — parsing of the parameters every report shares (bootstrap size and seed).
* :mod:`.agreement`, :mod:`.validity`, :mod:`.raters`, :mod:`.model_comparison`, :mod:`.outcomes`,
  :mod:`.pool_agreement` — the report computations: load, call :mod:`adjudication.stats`, shape a
  dictionary for pages, downloads, the REST API and the CLI.
* :mod:`.planning` — planning and monitoring a validation, and whether a pool's stopping rule is met.
* :mod:`.rendering` — the CSV downloads of every report and the ROC curve as SVG points.

Nothing here writes: the slow reports run as report jobs (:mod:`adjudication.report_jobs`), and the writes
planning leads to (a pool's stopping rule: set, reopen, close) are in :mod:`adjudication.validation.services`.
An import contract (pyproject.toml) keeps services, jobs and tasks out of this package.
"""
