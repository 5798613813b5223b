from typing import Any

import markdown
import nh3
from django import template
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

_ALLOWED_TAGS = {
    "p",
    "br",
    "strong",
    "em",
    "ul",
    "ol",
    "li",
    "code",
    "pre",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "hr",
}


@register.filter
def get_item(mapping: dict, key: Any) -> Any:
    return mapping.get(key, "")


@register.filter
def safe_markdown(text: str) -> SafeString:
    """Markdown rendered and then sanitised with an allow-list (no raw HTML, no script, no style)."""
    html = markdown.markdown(text or "", extensions=["tables"], output_format="html")
    cleaned = nh3.clean(
        html, tags=_ALLOWED_TAGS, attributes={"a": {"href", "title"}}, url_schemes={"http", "https", "mailto"}
    )
    return mark_safe(cleaned)
