"""Validation studies: a metric validated against an independent pool of humans.

* :mod:`.checks` — the independence and blinding checks a study must pass (disjoint pools, blind
  roles, exposure trail, pool visibility, the humans' own ceiling).
* :mod:`.studies` — creating a study from a template (ASTRID, ICAT, PubHealthBench, PlainQAFact),
  running its analyses and shaping its results.
"""
