"""The import job takes the common job fields of concord.jobs.Job: renames, and three new nullable/blank
fields (no data is lost)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0003_importjob_passwordchangerequired"),
    ]

    operations = [
        migrations.RenameField(model_name="importjob", old_name="progress_done", new_name="n_done"),
        migrations.RenameField(model_name="importjob", old_name="progress_total", new_name="n_total"),
        migrations.RenameField(model_name="importjob", old_name="created_by", new_name="requested_by"),
        migrations.AddField(model_name="importjob", name="error", field=models.TextField(blank=True)),
        migrations.AddField(
            model_name="importjob", name="started_at", field=models.DateTimeField(blank=True, null=True)
        ),
        migrations.AddField(
            model_name="importjob", name="finished_at", field=models.DateTimeField(blank=True, null=True)
        ),
    ]
