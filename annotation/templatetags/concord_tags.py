from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

from annotation.markdown import render_guidelines

register = template.Library()


@register.filter
def get_item(mapping: dict, key: Any) -> Any:
    return mapping.get(key, "")


@register.filter
def safe_markdown(text: str) -> SafeString:
    """CommonMark rendered in process (linear time) and sanitised with an allow-list (annotation/markdown.py)."""
    return mark_safe(render_guidelines(text or ""))  # nh3's output: only the allow-listed tags and links
