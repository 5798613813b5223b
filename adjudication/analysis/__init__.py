"""Reports over the database, as plain data.

* :mod:`.access` — which pools and questions of a study a report may read.
* :mod:`.loading` — the labels of a pool as a units × raters matrix, the metric sources (score runs,
  human measures) and the human targets; the only raw SQL of the reports lives here.
* :mod:`.params` — parsing of the parameters every report shares (bootstrap size and seed).
* :mod:`.agreement`, :mod:`.validity`, :mod:`.raters`, :mod:`.model_comparison`, :mod:`.outcomes`,
  :mod:`.pool_agreement` — the report computations: load, call :mod:`adjudication.stats`, shape a
  dictionary for pages, downloads, the REST API and the CLI.
* :mod:`.rendering` — the CSV downloads of every report and the ROC curve as SVG points.
* :mod:`.jobs` — the report-jobs service: the slow reports run as a ``ReportJob`` through
  ``concord.jobs.run_job``, and pages read back the finished result for their parameters.
"""
