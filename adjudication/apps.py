from django.apps import AppConfig


class AdjudicationConfig(AppConfig):
    name = "adjudication"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Celery's autodiscovery imports only adjudication.tasks; the reports' task module is
        # registered here so that a worker knows report_bootstrap_run.
        from adjudication import outcome_tasks, report_tasks  # noqa: F401
