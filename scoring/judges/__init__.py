"""Trained judges: Concord's ``learned`` backend made from clinicians' own gold.

- ``features``: the feature sets a judge is trained on (embedding, lexical, both);
- ``training``: reading labelled files, cross-validation with 95% intervals, calibration, confusion
  matrix, cross-fold models for cross-fitting, and the artifact written to disk (no database);
- ``gold``: the training examples of a study's current gold (the reader is registered by adjudication);
- ``services`` / ``selectors``: the registry (train, retire, share; which judges a study may use);
- ``views`` / ``api`` / ``urls``: the researcher's registry page and REST API.
"""
