"""Validation studies: a metric validated against an independent, blinded pool of humans — the source
papers' critics' tests, runnable end to end.

A validation study sets a **metric side** — a score run, and/or a measure derived from pool A's labels —
against a **target side**: a categorical question answered by pool B, taken as gold, as the pool's
majority, or annotator by annotator. Creating one records the independence and blinding checks and
refuses a study that fails a blocking one, unless the researcher explicitly runs it anyway: then
``not_independent`` is stamped on every output. Running one computes its paper template. Where an input
is absent, an analysis says exactly which one and computes nothing: never a crash, never a zero. Every
figure carries n and, where one exists, a 95% interval.

* :mod:`.inputs` — the wizard's and the API's inputs read as model values and refused with a reason;
  the checks a study with these inputs would record.
* :mod:`.checks` — the independence and blinding checks a study must pass (disjoint pools, blind
  roles, exposure trail, pool visibility, the humans' own ceiling).
* :mod:`.services` — the writes: creating and running a study (its results and their stamp), and the
  fixed-precision stopping rule of the pools they target (set, reopen, close on submit).
* :mod:`.figures` — what every template computes with: the template context (pool B's targets), the
  shape of an analysis, the reasons an input is missing, a run's values, AUC / correlation figures and
  the paired DeLong test.
* :mod:`.templates` — one module per paper template (ASTRID, ICAT, PubHealthBench, PlainQAFact) and
  their registry.
"""
