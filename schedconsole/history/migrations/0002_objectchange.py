"""The change log a replay reads, seeded from what the database already holds: every stored pod and
node as added when it was created (deleted ones as deleted when last updated), every binding."""

from __future__ import annotations

from typing import Any

from django.db import migrations, models


def seed(apps: Any, schema_editor: Any) -> None:
    ClusterObject = apps.get_model("cluster", "ClusterObject")
    Binding = apps.get_model("cluster", "Binding")
    ObjectChange = apps.get_model("history", "ObjectChange")
    rows: list[Any] = []
    for obj in ClusterObject.objects.filter(kind__in=("Pod", "Node")).order_by("id").iterator():
        doc = obj.document
        if obj.kind == "Pod" and isinstance(doc, dict):
            spec = dict(doc.get("spec") or {})
            spec.pop("nodeName", None)  # the binding below says where it went
            doc = {**doc, "spec": spec}
        rows.append(
            ObjectChange(
                at=obj.created, action="add", kind=obj.kind, namespace=obj.namespace, name=obj.name, uid=obj.uid, document=doc
            )
        )
        if obj.deleted:
            rows.append(
                ObjectChange(at=obj.updated, action="delete", kind=obj.kind, namespace=obj.namespace, name=obj.name, uid=obj.uid)
            )
    for binding in Binding.objects.order_by("id").iterator():
        namespace, _, name = binding.pod.partition("/")
        rows.append(
            ObjectChange(
                at=binding.at, action="bind", kind="Pod", namespace=namespace, name=name, uid=binding.pod_uid, node=binding.node
            )
        )
    rows.sort(key=lambda r: r.at)
    ObjectChange.objects.bulk_create(rows, batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("history", "0001_initial"), ("cluster", "0003_cluster_sync")]

    operations = [
        migrations.CreateModel(
            name="ObjectChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("at", models.DateTimeField(db_index=True)),
                ("action", models.CharField(max_length=8)),
                ("kind", models.CharField(max_length=16)),
                ("namespace", models.CharField(blank=True, default="", max_length=253)),
                ("name", models.CharField(max_length=253)),
                ("uid", models.CharField(blank=True, default="", max_length=64)),
                ("node", models.CharField(blank=True, default="", max_length=253)),
                ("document", models.JSONField(blank=True, null=True)),
            ],
            options={"ordering": ["id"]},
        ),
        migrations.RunPython(seed, migrations.RunPython.noop),
    ]
