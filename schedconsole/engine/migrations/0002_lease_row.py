from django.db import migrations


def create_row(apps, schema_editor):
    apps.get_model("engine", "EngineLease").objects.get_or_create(id=1)


class Migration(migrations.Migration):
    """The lease is one row, made here so that two engines never race to create it."""

    dependencies = [("engine", "0001_initial")]
    operations = [migrations.RunPython(create_row, migrations.RunPython.noop)]
