from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('governance', '0003_run_policy_digest'),
    ]

    operations = [
        migrations.AddField(
            model_name='approval',
            name='remember_scope',
            field=models.CharField(blank=True, choices=[('', 'not remembered'), ('run', 'this exact call, for the rest of this run'), ('policy', 'this exact call for this run, and a policy rule for future runs')], default='', max_length=8),
        ),
        migrations.AddField(
            model_name='rungrant',
            name='arguments_digest',
            field=models.CharField(default='', max_length=64),
        ),
    ]
