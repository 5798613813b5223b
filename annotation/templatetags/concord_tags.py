from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from annotation.markdown import render_guidelines
from concord.errors import DomainError

register = template.Library()


@register.filter
def get_item(mapping: dict, key: Any) -> Any:
    return mapping.get(key, "")


@register.filter
def safe_markdown(text: str) -> SafeString:
    """Markdown rendered under a time budget and sanitised with an allow-list (annotation/markdown.py).

    Text that cannot be rendered in time (only guidelines saved before they were checked) is shown as a
    notice, never as raw text.
    """
    try:
        return mark_safe(render_guidelines(text or ""))
    except DomainError as exc:
        return format_html('<p class="error" role="alert">The guidelines cannot be shown: {}</p>', exc.message)
