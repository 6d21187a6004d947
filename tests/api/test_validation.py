"""New objects are checked as kube-apiserver v1.35 checks them; messages are its own (captured from the real binary)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api.loader import LoadError, objects_from_documents
from scheduler.api.validation import check_object, refusal

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def pod(meta: dict[str, Any] | None = None, container: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "ok", **(meta or {})},
        "spec": {"containers": [{"name": "c", "image": "i", **(container or {})}], **spec},
    }


CASES = [
    ("slash", "Pod", pod({"name": "a/b"}), f'metadata.name: Invalid value: "a/b": {SUBDOMAIN}'),
    ("upper-case", "Pod", pod({"name": "Ab"}), f'metadata.name: Invalid value: "Ab": {SUBDOMAIN}'),
    ("too-long", "Pod", pod({"name": "a" * 254}), "must be no more than 253 characters"),
    ("generate-name", "Pod", pod({"name": "", "generateName": "A"}), f'metadata.generateName: Invalid value: "A": {SUBDOMAIN}'),
    (
        "namespace-dots",
        "Namespace",
        {"kind": "Namespace", "metadata": {"name": "a.b"}},
        'metadata.name: Invalid value: "a.b": must not contain dots',
    ),
    (
        "service-1035",
        "Service",
        {"kind": "Service", "metadata": {"name": "1a"}},
        "metadata.name: Invalid value: \"1a\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
        "start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
        "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ),
    ("uid", "Pod", pod({"uid": "u" * 65}), "metadata.uid: Too long: may not be more than 64 bytes"),
    (
        "label-value",
        "Pod",
        pod({"labels": {"x": "a" * 64}}),
        'metadata.labels: Invalid value: "' + "a" * 64 + '": must be no more than 63 bytes',
    ),
    (
        "label-key",
        "Pod",
        pod({"labels": {"a b": "x"}}),
        "metadata.labels: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ),
    (
        "annotations-size",
        "Pod",
        pod({"annotations": {"x": "a" * 262200}}),
        "metadata.annotations: Too long: may not be more than 262144 bytes",
    ),
    (
        "priority-int32",
        "Pod",
        pod(priority=2**31),
        "json: cannot unmarshal number 2147483648 into Go struct field PodSpec.spec.priority of type int32",
    ),
    ("priority-string", "Pod", pod(priority="5"), "json: cannot unmarshal string into Go struct field PodSpec.spec.priority"),
    ("unknown-field", "Pod", pod(foo=1), 'unknown field "spec.foo"'),
    ("unknown-nested", "Pod", pod(container={"bar": 1}), 'unknown field "spec.containers[0].bar"'),
    (
        "cpu-millicores",
        "Pod",
        pod(container={"resources": {"requests": {"cpu": "99999999999999999999999"}}}),
        'spec.containers[0].resources.requests.cpu: Invalid value: "99999999999999999999999": must be no more than',
    ),
    ("nul", "Pod", pod({"annotations": {"x": "a\x00b"}}), "must not contain NUL characters"),
    (
        "nan",
        "Node",
        {"kind": "Node", "metadata": {"name": "n", "labels": {}}, "status": {"capacity": {"cpu": float("nan")}}},
        "finite",
    ),
    (
        "user-priority-class",
        "PriorityClass",
        {"kind": "PriorityClass", "metadata": {"name": "p"}, "value": 2000000000},
        "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
    ),
]


@pytest.mark.parametrize(("kind", "doc", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_refused_with_kube_apiservers_words(kind: str, doc: dict[str, Any], text: str) -> None:
    issues = check_object(kind, doc)
    assert issues, doc
    assert text in issues[0].text


@pytest.mark.parametrize(
    ("kind", "doc"),
    [
        ("Pod", pod({"name": "web-0.a", "namespace": "team-a", "labels": {"app.kubernetes.io/name": "web"}}, priority=-(2**31))),
        ("Pod", pod({"generateName": "web-", "name": ""}, container={"resources": {"requests": {"cpu": "9223372036854775m"}}})),
        ("Service", {"kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}),
        ("PriorityClass", {"kind": "PriorityClass", "metadata": {"name": "system-x"}, "value": 2000000000}),
        ("PodGroup", {"kind": "PodGroup", "metadata": {"name": "g", "namespace": "default"}, "spec": {"anything": 1}}),
    ],
    ids=["pod", "generate-name-and-largest-cpu", "service", "system-priority-class", "extension-kind-fields-unknown"],
)
def test_accepted(kind: str, doc: dict[str, Any]) -> None:
    assert check_object(kind, doc) == []


def test_several_problems_are_one_list_as_kube_apiserver_joins_them() -> None:
    text = refusal("Pod", pod({"name": "Ab", "labels": {"x": "a" * 64}}))
    assert text.startswith('[metadata.name: Invalid value: "Ab": ') and ", metadata.labels: " in text and text.endswith("]")


def test_strict_loading_names_the_source_document_and_field() -> None:
    with pytest.raises(LoadError) as caught:
        objects_from_documents([("body", 1, pod({"name": "a/b"}))], strict=True)
    assert str(caught.value).startswith('body: document 1 (Pod a/b): metadata.name: Invalid value: "a/b": ')
    with pytest.raises(LoadError, match=r'items\[1\]\.spec\.foo: unknown field "spec.foo"'):
        objects_from_documents(
            [("f", 1, {"kind": "List", "items": [pod({"name": "x"}), pod({"name": "y"}, foo=1)]})], strict=True
        )


def test_loading_what_is_already_stored_stays_lenient() -> None:
    # A database written before these checks must still load (a leader that cannot load cannot lead).
    objects = objects_from_documents([("database", 1, pod({"name": "Old_Name"}, foo=1))])
    assert [p.name for p in objects.pods] == ["Old_Name"]
