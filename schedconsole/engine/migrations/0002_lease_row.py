from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def create_row(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    apps.get_model("engine", "EngineLease").objects.get_or_create(id=1)


class Migration(migrations.Migration):
    """The lease is one row, made here so that two engines never race to create it."""

    dependencies = [("engine", "0001_initial")]
    operations = [migrations.RunPython(create_row, migrations.RunPython.noop)]
