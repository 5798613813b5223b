from django.apps import AppConfig


class AdjudicationConfig(AppConfig):
    name = "adjudication"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Gold lives in this app; scoring's judge training reads it through the reader registered here
        # (the models can be imported only once the apps are loaded).
        from adjudication.judge_gold import current_gold
        from scoring.judges.gold import register_gold_reader

        register_gold_reader(current_gold)
