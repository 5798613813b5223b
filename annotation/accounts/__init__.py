"""People's own account pages, and the middleware that sends them there first.

A person changes their password here, and an invited person chooses their first one. People created
by a researcher with a one-time password carry ``annotation.models.PasswordChangeRequired`` and are
sent to the password page before anything else until they have chosen their own. The package lives
in ``annotation`` because that flag, the study roles and the console that creates the accounts
(``annotation.console.services.account_create``) all belong to this app.

* ``views``: the password-change page and the invitation link (Django's auth views, plus the flag).
* ``urls``: mounted under ``/accounts/`` (namespace ``account``).
* ``middleware``: ``PasswordChangeRequiredMiddleware`` (listed in ``settings.MIDDLEWARE``).
"""
