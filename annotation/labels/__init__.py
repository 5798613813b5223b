"""A label save, in one package: an annotator's answer to one question of one unit, kept with its history.

Read in this order:

* ``save`` — the entry points (:func:`label_save`, :func:`label_save_in_unit`), the :class:`SaveRequest`
  every step receives, the one-statement save (PostgreSQL) and the locked save, and the checks they share;
* ``statements`` — the save's statements written out in SQL from the models' metadata (token, access, the
  pool's questions, the lock, the label and its history, the one-statement save);
* ``access`` — the annotator access rule, its ORM and SQL forms side by side, and who may change a label;
* ``questions`` — the pool's questions, kept per process under the questions' revision;
* ``conflicts`` — what a 409 tells (the newer value; who set it only when it was "you");
* ``undo`` — undoing the last change, as new versions.

Callers: ``annotation.views.label_save`` (the item page, htmx) and ``annotation.api.LabelApi`` (the API);
the page around a save is ``annotation.workspace``.
"""

from annotation.labels.save import LabelSaved, SaveRequest, label_save, label_save_in_unit
from annotation.labels.undo import Undone, label_undo

__all__ = ["LabelSaved", "SaveRequest", "Undone", "label_save", "label_save_in_unit", "label_undo"]
