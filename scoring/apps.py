from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class ScoringConfig(AppConfig):
    name = "scoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Every backend registers its descriptor when scoring.backends is imported.
        from scoring.backends import BACKEND_NAMES

        backend_overrides_check(BACKEND_NAMES)
        # /metrics reads the progress of running score runs at each scrape.
        from concord.ops.metrics import register_scrape_collector
        from scoring.ops_metrics import RunProgressCollector

        register_scrape_collector(RunProgressCollector())


def backend_overrides_check(backends: tuple[str, ...]) -> None:
    """Refuse an environment override for a backend that does not exist (``SCORING_QUEUE_EMBEDING=...``): the
    settings read every ``SCORING_QUEUE_<BACKEND>`` / ``SCORING_BATCH_SIZE_<BACKEND>`` variable without knowing
    the backends, and a misspelt one would otherwise leave its backend on the default unnoticed."""
    for setting, prefix in (("SCORING_QUEUES", "SCORING_QUEUE_"), ("SCORING_BATCH_SIZES", "SCORING_BATCH_SIZE_")):
        unknown = sorted(set(getattr(settings, setting)) - set(backends))
        if unknown:
            names = ", ".join(prefix + name.upper() for name in unknown)
            raise ImproperlyConfigured(f"{names} names no backend; the backends are {', '.join(backends)}")
