"""Drops the single-column indexes of three foreign keys whose unique constraint's index already starts
with the same column: Item.study (unique study, external_id), Sentence.item (unique item, part, index) and
Chunk.item (unique item, rank). Lookups and cascades by the key use the constraint's index; an import no
longer maintains a second index per row (issue O). Only the indexes go: the foreign keys stay as they are
(AlterField would drop and re-add them, revalidating every row)."""

import django.db.models.deletion
from django.db import migrations, models

# (table, column, index name as Django created it on both databases)
_INDEXES = [
    ("annotation_chunk", "item_id", "annotation_chunk_item_id_d6076f59"),
    ("annotation_item", "study_id", "annotation_item_study_id_99dc0d57"),
    ("annotation_sentence", "item_id", "annotation_sentence_item_id_697aedd6"),
]


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0010_questions_revision'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{name}"',
                    reverse_sql=f'CREATE INDEX "{name}" ON "{table}" ("{column}")',
                )
                for table, column, name in _INDEXES
            ],
            state_operations=[
                migrations.AlterField(
                    model_name='chunk',
                    name='item',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='chunks', to='annotation.item'),
                ),
                migrations.AlterField(
                    model_name='item',
                    name='study',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='items', to='annotation.study'),
                ),
                migrations.AlterField(
                    model_name='sentence',
                    name='item',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='sentences', to='annotation.item'),
                ),
            ],
        ),
    ]
