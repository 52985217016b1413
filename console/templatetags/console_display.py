"""Template filters for the console's pages."""

from __future__ import annotations

from django import template

from console.candidate_display import arrange

register = template.Library()


@register.filter
def arranged(candidates):
    """``{% with view=candidates|arranged %}``: see console.candidate_display.arrange."""
    return arrange(candidates or [])


@register.filter
def lookup(mapping, key):
    """``{{ origins|lookup:"dedup_distance" }}``: a dict entry by a variable or literal key."""
    return (mapping or {}).get(key, "")
