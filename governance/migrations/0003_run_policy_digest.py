from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def copy_digests(apps, schema_editor):
    Run = apps.get_model("governance", "Run")
    PolicyVersion = apps.get_model("governance", "PolicyVersion")
    Run.objects.update(
        policy_digest=Subquery(
            PolicyVersion.objects.filter(pk=OuterRef("policy_version_id")).values("digest")[:1]
        )
    )


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0002_drop_redundant_run_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="policy_digest",
            field=models.CharField(default="", editable=False, max_length=64),
            preserve_default=False,
        ),
        migrations.RunPython(copy_digests, migrations.RunPython.noop),
    ]
