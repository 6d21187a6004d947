"""The profile editor after a refused Apply holds what was refused: the text, why, the comment,
the difference from the active version, and an Apply that stays off until the text is valid."""

from __future__ import annotations

from django.test import Client

from schedconsole.profiles.models import ProfileVersion

REFUSED = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 900\n"


def test_a_refused_apply_keeps_the_editor_as_it_was(engine, operator) -> None:
    # It said "No difference" beside the changed editor, dropped the validation line and the comment.
    client = Client()
    client.force_login(operator)
    page = client.post("/profiles/apply/", {"text": REFUSED, "comment": "score fewer nodes"}, follow=True).content.decode()
    assert ProfileVersion.objects.count() == 1
    assert "percentageOfNodesToScore: 900" in page
    validation = page.split('id="validation"')[1].split("</p>")[0]
    assert 'class="error"' in validation and "Invalid — percentageOfNodesToScore" in validation
    assert 'value="score fewer nodes"' in page
    diff = page.split('id="diff"')[1].split("</pre>")[0]
    assert "No difference" not in diff and '<span class="add">+percentageOfNodesToScore: 900</span>' in diff
    assert '<button id="apply" type="submit" disabled title="the editor\'s configuration is invalid"' in page
    # The next visit starts from the active version again.
    fresh = client.get("/profiles/").content.decode()
    assert (
        "percentageOfNodesToScore: 900" not in fresh
        and "No difference." in fresh
        and '<button id="apply" type="submit"  data-operator="1">' in fresh
    )
