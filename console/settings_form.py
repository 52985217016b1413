"""The settings form, generated from the registry (tenants.space_settings.SETTINGS).

Nothing here lists settings by name: a Setting added to the registry gets a control from its kind —
a slider for a distance with ``slider_max``, a number for other numbers, one number per key for an
object with fixed ``keys``, a JSON text box for other objects, a checkbox for a flag — and is read
back from the posted form the same way.

Two groups: the general settings (the thresholds and tenant-defaults pages) and the ones that only
matter in a shared space (its own section there). A checkbox sends nothing when unticked, so each one
has a hidden marker beside it naming it; a flag whose marker is not posted is left as it is (a form
from before a flag was added, or a script posting a few fields, never switches flags off).

Only the fields whose value differs from the one the form was rendered with are returned (the form
carries those values in a hidden field): a save changes what the operator changed, never pins
(tenants.settings_service) a setting nobody touched, and never puts back a value someone else
changed while the form was open.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from django.core.exceptions import ValidationError

from memory.investigation import examples_at
from tenants.space_settings import SETTINGS, Setting

GENERAL, SHARED = "general", "shared"
MARKERS = {GENERAL: "flags_present", SHARED: "shared_present"}
RENDERED = "rendered_from"
# The order controls appear in within a group: tuning controls first, free-form text last.
CONTROL_ORDER = ("slider", "number", "keys", "checkbox", "json")
SLIDER_STEP, FRACTION_STEP, KEY_STEP = 0.005, 0.01, 0.1
JSON_HINT = 'Must be a JSON object, e.g. {"question": 2, "product": 1}.'


@dataclasses.dataclass(frozen=True)
class Field:
    """One setting as the form shows it."""

    setting: Setting
    control: str
    value: Any
    errors: list[str]

    @property
    def name(self) -> str:
        return self.setting.name

    @property
    def label(self) -> str:
        if self.setting.kind is int:
            return f"{self.setting.title} ({self.setting.minimum}–{self.setting.maximum})"
        return self.setting.title

    @property
    def step(self) -> float | None:
        if self.control == "slider":
            return SLIDER_STEP
        if self.control == "keys":
            return KEY_STEP
        return FRACTION_STEP if self.setting.kind is float else None

    @property
    def maximum(self):
        return self.setting.slider_max if self.control == "slider" else self.setting.maximum

    @property
    def examples(self) -> list[dict]:
        """Built-in sentence pairs and what the current value does with each (a distance slider only)."""
        return examples_at(self.name, self.value) if self.control == "slider" else []

    @property
    def items(self) -> list[tuple[str, str, Any]]:
        """For an object with fixed keys: (key, field name, value) for each key."""
        return [(key, key_field(self.name, key), (self.value or {}).get(key, "")) for key in self.setting.keys]


def control_of(setting: Setting) -> str:
    if setting.kind is bool:
        return "checkbox"
    if setting.kind is dict:
        return "keys" if setting.keys else "json"
    return "slider" if setting.slider_max is not None else "number"


def key_field(name: str, key: str) -> str:
    return f"{name}__{key}"


def settings_in(group: str) -> list[Setting]:
    chosen = [s for s in SETTINGS.values() if s.shared_only == (group == SHARED)]
    return sorted(chosen, key=lambda s: CONTROL_ORDER.index(control_of(s)))


def form_fields(group: str, current: dict, errors: dict) -> list[Field]:
    """The group's fields with the current values and each field's errors (``name`` or ``name.part``)."""
    fields = []
    for setting in settings_in(group):
        control = control_of(setting)
        value = current.get(setting.name, setting.default)
        if control == "json":
            value = json.dumps(value, indent=1)
        mine = [
            f"{key}: {messages[0]}" if key != setting.name else messages[0]
            for key, messages in errors.items()
            if key == setting.name or key.startswith(f"{setting.name}.")
        ]
        fields.append(Field(setting=setting, control=control, value=value, errors=mine))
    return fields


def rendered_from(current: dict) -> str:
    """The hidden field's value: the settings the form shows, to tell the operator's changes apart."""
    return json.dumps(current, sort_keys=True)


def changed_values(data, current: dict, layer: dict, groups=(GENERAL, SHARED)) -> dict:
    """The posted values that differ from those the form was rendered with (without that hidden
    field, from ``current``, the effective settings now).

    ``layer`` is the stored layer being edited (a space's overrides or the tenant's defaults): an
    object with fixed keys is saved as that layer's object with the changed keys set.
    A malformed number or JSON text is a ValidationError naming the field."""
    current = {**current, **_rendered(data)}
    changes = {}
    for group in groups:
        flags_posted = set(data.getlist(MARKERS[group])) if hasattr(data, "getlist") else set()
        for setting in settings_in(group):
            control = control_of(setting)
            if control == "checkbox":
                if setting.name in flags_posted:
                    value = data.get(setting.name) == "on"
                    if value != current.get(setting.name):
                        changes[setting.name] = value
            elif control == "keys":
                changed_keys = _changed_keys(setting, data, current.get(setting.name) or {})
                if changed_keys:
                    changes[setting.name] = {**((layer or {}).get(setting.name) or {}), **changed_keys}
            else:
                raw = data.get(setting.name)
                if raw is None or (control != "json" and raw == ""):
                    continue
                value = _parsed(setting, control, raw)
                if value != current.get(setting.name):
                    changes[setting.name] = value
    return changes


def _rendered(data) -> dict:
    raw = data.get(RENDERED)
    if raw is None:
        return {}
    try:
        rendered = json.loads(raw)
    except json.JSONDecodeError:
        rendered = None
    if not isinstance(rendered, dict):
        raise ValidationError({RENDERED: ["The form is damaged; reload the page and make the change again."]})
    return {name: value for name, value in rendered.items() if name in SETTINGS}


def _changed_keys(setting: Setting, data, current: dict) -> dict:
    changed = {}
    for key in setting.keys:
        raw = data.get(key_field(setting.name, key))
        if raw in (None, ""):
            continue
        try:
            value = float(raw)
        except ValueError:
            raise ValidationError({setting.name: [f"The {key} weight must be a number."]}) from None
        if value != current.get(key):
            changed[key] = value
    return changed


def _parsed(setting: Setting, control: str, raw: str):
    if control == "json":
        try:
            return json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            raise ValidationError({setting.name: [JSON_HINT]}) from None
    try:
        return float(raw) if setting.kind is float else int(raw)
    except ValueError:
        raise ValidationError({setting.name: ["Must be a number."]}) from None
