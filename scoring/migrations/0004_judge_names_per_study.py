"""Judge names are unique per study (and among the judges without a study), no longer site-wide: a refused
name must not tell a study's researchers that another study has a judge of that name (issue Q, finding 12)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("scoring", "0003_trained_judges"),
    ]

    operations = [
        migrations.AlterField(
            model_name="trainedjudge",
            name="name",
            field=models.CharField(max_length=100),
        ),
        migrations.AddConstraint(
            model_name="trainedjudge",
            constraint=models.UniqueConstraint(fields=("study", "name"), name="judge_name_unique_in_study"),
        ),
        migrations.AddConstraint(
            model_name="trainedjudge",
            constraint=models.UniqueConstraint(
                condition=models.Q(("study__isnull", True)), fields=("name",), name="judge_name_unique_without_study"
            ),
        ),
    ]
