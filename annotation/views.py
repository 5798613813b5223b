from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotation.models import Study
from concord.access import access_policy


@access_policy("authenticated")
def home(request: HttpRequest) -> HttpResponse:
    studies = Study.objects.for_user(request.user).prefetch_related("roles")
    roles: dict[int, list[str]] = {}
    for study in studies:
        roles[study.pk] = sorted({r.role for r in study.roles.all() if r.user_id == request.user.pk})
    return render(request, "annotation/home.html", {"studies": studies, "roles": roles})
