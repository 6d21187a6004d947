"""The console's two roles as groups."""

from django.db import migrations


def create_groups(apps, schema_editor):  # type: ignore[no-untyped-def]
    group = apps.get_model("auth", "Group")
    for name in ("viewer", "operator"):
        group.objects.get_or_create(name=name)


class Migration(migrations.Migration):
    dependencies = [("auth", "0012_alter_user_first_name_max_length")]
    operations = [migrations.RunPython(create_groups, migrations.RunPython.noop)]
