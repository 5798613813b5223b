"""Operations: health probes (/healthz, /readyz), Prometheus metrics (/metrics), request ids in JSON logs and
in the Celery tasks a request starts, and the workers' heartbeats (docs/operations.md)."""
