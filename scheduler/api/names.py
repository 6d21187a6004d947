"""Qualified names, DNS subdomains and label values, checked with apimachinery's rules and wording."""

from __future__ import annotations

import re

from scheduler.api.fielderrors import FieldIssue, invalid

QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
QUALIFIED_NAME_MAX = 63
DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_MAX = 253
DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
DNS1123_LABEL_MAX = 63
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?"
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
LABEL_VALUE_MAX = 63


def regex_error(message: str, pattern: str, *examples: str) -> str:
    """apimachinery's RegexError text, including its doubled space before each ` or `."""
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def _too_long(limit: int, unit: str = "characters") -> str:
    # apimachinery v1.35 counts DNS names in characters, label values and name parts in bytes.
    return f"must be no more than {limit} {unit}"


def _byte_len(text: str) -> int:
    # Go's len() counts bytes, not characters.
    return len(text.encode())


def is_dns1123_subdomain(value: str) -> list[str]:
    """Why a value is not a DNS-1123 subdomain (empty when it is one)."""
    errs = []
    if _byte_len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(_too_long(DNS1123_SUBDOMAIN_MAX))
    if not re.fullmatch(DNS1123_SUBDOMAIN_FMT, value):
        errs.append(regex_error(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1123_label(value: str) -> list[str]:
    """Why a value is not a DNS-1123 label such as a namespace's name (empty when it is one)."""
    errs = []
    if _byte_len(value) > DNS1123_LABEL_MAX:
        errs.append(_too_long(DNS1123_LABEL_MAX))
    if not re.fullmatch(DNS1123_LABEL_FMT, value):
        if re.fullmatch(DNS1123_SUBDOMAIN_FMT, value):
            errs.append("must not contain dots")  # a subdomain of the right length: dots are the problem
        else:
            errs.append(regex_error(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """Why a value is not a DNS-1035 label such as a Service's name (empty when it is one)."""
    errs = []
    if _byte_len(value) > DNS1123_LABEL_MAX:
        errs.append(_too_long(DNS1123_LABEL_MAX))
    if not re.fullmatch(DNS1035_LABEL_FMT, value):
        errs.append(regex_error(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """Why a value is not a qualified name such as `example.com/MyName` (empty when it is one)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a qualified name "
            + regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + msg for msg in is_dns1123_subdomain(prefix))
    if not name:
        errs.append("name part must be non-empty")
    elif _byte_len(name) > QUALIFIED_NAME_MAX:
        errs.append("name part " + _too_long(QUALIFIED_NAME_MAX, "bytes"))
    if not re.fullmatch(QUALIFIED_NAME_FMT, name):
        errs.append("name part " + regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """Why a value is not a valid label value (empty when it is one)."""
    errs = []
    if _byte_len(value) > LABEL_VALUE_MAX:
        errs.append(_too_long(LABEL_VALUE_MAX, "bytes"))
    if not re.fullmatch(LABEL_VALUE_FMT, value):
        errs.append(regex_error(LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def validate_label_name(value: str, path: str) -> list[FieldIssue]:
    """metav1 ValidateLabelName: one Invalid issue per reason the name is not qualified."""
    return [invalid(path, value, msg) for msg in is_qualified_name(value)]


def is_extended_resource_name(name: str) -> bool:
    """Whether a resource name is an extended resource (`example.com/gpu`), as v1helper decides."""
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)
