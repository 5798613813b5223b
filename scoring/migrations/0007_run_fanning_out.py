"""ScoreRun.fanning_out: a running run whose chunked fan-out has not yet read every item (issue W, scale).

False for every run already there: their fan-out wrote all their batches in one transaction. Adding a boolean
column with a constant default is a catalogue change on PostgreSQL 11+ (no table rewrite).
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('scoring', '0006_judge_task_kind'),
    ]

    operations = [
        migrations.AddField(
            model_name='scorerun',
            name='fanning_out',
            field=models.BooleanField(default=False),
        ),
    ]
