"""The WSGI application (gunicorn: ``concord.wsgi:application``, gunicorn.conf.py).

The URL configuration, and with it every view module and what they import (the scoring and statistics
libraries), is loaded here rather than at each process's first request: under gunicorn's
``preload_app`` the arbiter loads it once and every worker it forks (and every replacement after
``max_requests``) starts with it, instead of spending seconds of CPU importing it while requests wait.
Nothing here opens a database connection.
"""

import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")
application = get_wsgi_application()
get_resolver().url_patterns  # noqa: B018 (imports the URLconf and the views now)
