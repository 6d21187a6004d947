"""/k8s refuses what kube-apiserver refuses, in its words, and honours `fieldValidation` (kube-apiserver v1.35's texts)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.k8sapi.conftest import Console

PODS = "/k8s/api/v1/namespaces/default/pods"
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec},
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (pod("a/b"), f'Pod "a/b" is invalid: metadata.name: Invalid value: "a/b": {SUBDOMAIN}'),
        (pod("Upper"), f'Pod "Upper" is invalid: metadata.name: Invalid value: "Upper": {SUBDOMAIN}'),
        (pod("a" * 254), f'Pod "{"a" * 254}" is invalid: metadata.name: Invalid value: '),
        (
            {**pod("labelled"), "metadata": {"name": "labelled", "labels": {"x": "a" * 64}}},
            'Pod "labelled" is invalid: metadata.labels: Invalid value: "' + "a" * 64 + '": must be no more than 63 bytes',
        ),
    ],
    ids=["slash", "upper-case", "too-long", "label-value"],
)
def test_invalid_objects_get_422_in_kube_apiservers_words(console: Console, body: dict[str, Any], message: str) -> None:
    code, answer = console.request("POST", PODS, body)
    assert code == 422, answer
    assert answer["reason"] == "Invalid"
    assert answer["message"].startswith(message)


def test_an_int32_out_of_range_is_a_400_whatever_field_validation_says(console: Console) -> None:
    code, answer = console.request("POST", PODS + "?fieldValidation=Ignore", pod("big-priority", priority=2**31))
    assert code == 400, answer
    assert answer["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number 2147483648 into Go struct field '
        "PodSpec.spec.priority of type int32"
    )


def test_field_validation_strict_warn_and_ignore(console: Console) -> None:
    code, answer = console.request("POST", PODS + "?fieldValidation=Strict", pod("strict", foo=1))
    assert code == 400, answer
    assert answer["message"] == 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo"'
    code, answer, headers = console.exchange("POST", PODS, pod("warned", foo=1))
    assert code == 201, answer
    assert headers["Warning"] == '299 - "unknown field \\"spec.foo\\""'
    code, answer, headers = console.exchange("POST", PODS + "?fieldValidation=Ignore", pod("ignored", foo=1))
    assert code == 201, answer
    assert headers.get("Warning") is None
    code, answer = console.request("POST", PODS + "?fieldValidation=Sometimes", pod("odd"))
    assert code == 422, answer
    assert answer["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Sometimes": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )
    code, answer = console.request("GET", PODS + "/warned")
    assert code == 200 and "foo" not in answer["spec"], answer  # dropped, as kube-apiserver drops it


def test_field_validation_on_patch(console: Console) -> None:
    """A patch is checked on the object it makes (the texts are compared with kube-apiserver's in
    tests/realcluster/test_field_validation.py)."""
    assert console.request("POST", PODS, pod("patched"))[0] == 201
    patch = {"metadata": {"labels": {"a": "b"}}, "spec": {"foo": 1}}
    merge = "application/merge-patch+json"
    code, answer = console.request("PATCH", PODS + "/patched?fieldValidation=Strict", patch, content_type=merge)
    assert code == 422, answer
    assert answer["message"].startswith(' "" is invalid: patch: Invalid value: "{')
    assert answer["message"].endswith('": strict decoding error: unknown field "spec.foo"')
    code, answer, headers = console.exchange("PATCH", PODS + "/patched", patch, content_type=merge)
    assert code == 200, answer
    assert headers["Warning"] == '299 - "unknown field \\"spec.foo\\""'
    assert answer["metadata"]["labels"] == {"a": "b"} and "foo" not in answer["spec"]


def test_kubectl_refuses_unknown_fields_as_against_kube_apiserver(console: Console, tmp_path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: kubectl-strict}\nspec:\n  containers: [{name: c, image: i}]\n  foo: 1\n"
    )
    done = console.kubectl("create", "-f", str(path), check=False)
    assert done.returncode != 0
    assert 'strict decoding error: unknown field "spec.foo"' in done.stderr
