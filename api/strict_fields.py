"""Text fields take text, exactly as the OpenAPI schema says, and keep it verbatim.

Django REST framework turns a JSON number into a string for ``CharField`` (and picks the choice
``"1"`` for the number 1). For a JSON API that means a client bug — ``{"space": 42}`` — is
silently accepted and stored as "42", and the published schema lies. ``install()`` (called once
at start-up) makes every text and choice field refuse anything but a string; form and multipart
input are strings anyway, so browsers and uploads are unaffected.
"""

from __future__ import annotations

from rest_framework import serializers

_installed = False


def _strict(original):
    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        if not self.allow_blank and not data.strip():
            self.fail("blank")  # kept verbatim, but a text of only spaces is still no text
        return original(self, data)

    return to_internal_value


def install() -> None:
    global _installed
    if _installed:
        return
    serializers.CharField.to_internal_value = _strict(serializers.CharField.to_internal_value)
    original_init = serializers.CharField.__init__

    def init(self, **kwargs):
        # Verbatim: trimming would also make ``max_length`` mean something else than the schema says.
        kwargs.setdefault("trim_whitespace", False)
        original_init(self, **kwargs)

    serializers.CharField.__init__ = init
    serializers.CharField.default_error_messages = {
        **serializers.CharField.default_error_messages, "invalid": "Must be a string.",
    }  # fmt: skip
    original_choice = serializers.ChoiceField.to_internal_value

    def choice_to_internal_value(self, data):
        if not isinstance(data, str) and all(isinstance(key, str) for key in self.choices):
            self.fail("invalid_choice", input=data)
        return original_choice(self, data)

    serializers.ChoiceField.to_internal_value = choice_to_internal_value
    _installed = True
