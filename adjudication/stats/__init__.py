"""Pure statistics of adjudication: numbers in, numbers out.

No module here imports Django or any app: each takes plain arrays and dictionaries and returns
``Estimate`` objects or plain data, so it can be tested against published values and reused anywhere.

* :mod:`.agreement` — percent agreement, Cohen's, Fleiss' kappa, Krippendorff's alpha, bootstrap helpers.
* :mod:`.validity` — ROC AUC with DeLong intervals, correlations, the Youden threshold.
* :mod:`.measures` — human measures per item (precision, recall, ...) computed from gold and labels.
* :mod:`.rater_stats` — a model as one more rater: agreement with humans, McNemar.
* :mod:`.pattern_agreement` — agreement from answer patterns with unit weights (export cards).
* :mod:`.outcome_cv` — repeated stratified cross-validation of outcome prediction.
* :mod:`.validation_stats` — mean intervals and paired differences of validation studies.
* :mod:`.targets` — human targets from coded ratings: majority vote, binary target, value coding.
* :mod:`.ppi` — prediction-powered estimates (PPI, PPI++, active, paired, cross-prediction) and label planning.
"""
