"""What annotation tells the layers above it.

annotation imports no other app (docs/architecture.md, "Layers"), yet what happens once an item is submitted
belongs to them (adjudication turns agreeing labels into gold and disagreements into cases, and closes a pool
whose fixed-precision rule is met). So annotation sends a signal and the app that cares connects to it in its
own ``AppConfig.ready()``, with a ``dispatch_uid`` so that it is connected once however often its module is
imported. docs/architecture.md, "Calls that go up", lists every receiver.
"""

from django.dispatch import Signal

# Sent with ``sender=Assignment`` and the keyword arguments ``pool_id`` and ``item_id`` when an assignment
# becomes submitted: by ``annotation.services.assignment_submit``, and by the importer once per item whose
# imported labels arrive as submitted assignments. Sent with ``send``, not ``send_robust``, inside the
# submitting transaction: a receiver that raises rolls the submission (or the whole import) back, so no item
# is left submitted without what its submission sets off.
assignment_submitted = Signal()
