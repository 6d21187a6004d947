"""`manage.py prepare`: what a production start needs once, before its processes start.

It migrates the database, gathers the static files for WhiteNoise (`collectstatic`; without them
the login page was a 500), and creates the first operator from SCHEDCONSOLE_OPERATOR_USERNAME and
SCHEDCONSOLE_OPERATOR_PASSWORD when both are set and no such user exists. Safe to run again.
`--no-collectstatic` where the files were gathered at build time (the image: deploy/build.sh).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from schedconsole.accounts.permissions import OPERATOR


class Command(BaseCommand):
    """Migrate, collect static files, create the first operator."""

    help = (
        "Prepare a production start: migrate, collectstatic, and the operator named by "
        "SCHEDCONSOLE_OPERATOR_USERNAME with SCHEDCONSOLE_OPERATOR_PASSWORD (when both are set)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        """--no-collectstatic."""
        parser.add_argument(
            "--no-collectstatic", action="store_true", help="skip collectstatic (the image gathers the files at build time)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Run the three steps, saying what each did."""
        name, password = settings.OPERATOR_USERNAME, settings.OPERATOR_PASSWORD
        if bool(name) != bool(password):
            raise CommandError("set both SCHEDCONSOLE_OPERATOR_USERNAME and SCHEDCONSOLE_OPERATOR_PASSWORD, or neither")
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write("migrate: the database is at the latest migration")
        if options["no_collectstatic"]:
            self.stdout.write("collectstatic: skipped (--no-collectstatic)")
        else:
            call_command("collectstatic", interactive=False, verbosity=0)
            self.stdout.write(f"collectstatic: static files gathered in {settings.STATIC_ROOT}")
        if not name:
            self.stdout.write("operator: none requested (SCHEDCONSOLE_OPERATOR_USERNAME is not set)")
            return
        users = get_user_model()
        if users.objects.filter(username=name).exists():
            self.stdout.write(f"operator: {name} exists already (its password is left as it is)")
            return
        try:
            validate_password(password)
        except ValidationError as exc:
            raise CommandError(f"SCHEDCONSOLE_OPERATOR_PASSWORD: {' '.join(exc.messages)}") from None
        user = users.objects.create_user(name, "", password)
        user.groups.add(Group.objects.get_or_create(name=OPERATOR)[0])
        self.stdout.write(
            f"operator: {name} created (group {OPERATOR}); scripts get a token with `manage.py drf_create_token {name}`"
        )
