from django.db import models


class WorkerHeartbeat(models.Model):
    """A Celery worker's last sign of life, written every CONCORD_WORKER_HEARTBEAT_SECONDS by the worker itself
    (concord.ops.heartbeat): /readyz wants a fresh one for every queue, /metrics gives each one's age."""

    hostname = models.CharField(max_length=255, unique=True)
    queues = models.JSONField(default=list)
    pid = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField()
    last_seen = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["hostname"]

    def __str__(self) -> str:
        return f"{self.hostname} ({', '.join(self.queues)})"
