"""Request and response shapes of the shared-space endpoints (episodes, escalations, export/import)."""

from rest_framework import serializers

from api.memory_serializers import StrictTextField
from memory.models import Episode
from tenants.input_rules import AGENT_PATTERN

AGENT_FIELD = dict(max_length=100, required=False, allow_blank=True, default="")


class InputsField(serializers.DictField):
    """``{argument: value}``: text, a number, JSON, or a file ``{"filename", "content_type", "data_base64"}``."""

    def __init__(self, **kwargs):
        super().__init__(child=serializers.JSONField(), allow_empty=False, **kwargs)


class FeedbackInput(serializers.Serializer):
    sentiment = serializers.ChoiceField(choices=Episode.Sentiment.choices, required=False, allow_blank=True)
    comment = StrictTextField(required=False, allow_blank=True, max_length=20_000)


class DuplicateChoiceInput(serializers.Serializer):
    on_duplicate = serializers.ChoiceField(
        choices=["replace", "merge", "add"],
        required=False,
        help_text="What to do when near-duplicates exist; without it such a request is answered 409 with them.",
    )
    target_id = serializers.UUIDField(
        required=False, help_text="The near-duplicate to replace or merge into (default: the closest)."
    )
    sentiment_wins = serializers.ChoiceField(
        choices=["existing", "new"],
        required=False,
        help_text="On merge, whose sentiment (episodes) or outcome (resolutions) is kept when they disagree.",
    )


class EpisodeInput(DuplicateChoiceInput):
    inputs = InputsField()
    output = StrictTextField(allow_blank=True, max_length=100_000)
    outcome = StrictTextField(allow_blank=True, max_length=2_000)
    feedback = FeedbackInput(required=False)
    agent = serializers.RegexField(AGENT_PATTERN, **AGENT_FIELD)


class EpisodeUpdateInput(serializers.Serializer):
    """Feedback and results may change; ``inputs`` is refused (delete the episode and add a new one)."""

    output = StrictTextField(required=False, allow_blank=True, max_length=100_000)
    outcome = StrictTextField(required=False, allow_blank=True, max_length=2_000)
    resolution_comment = StrictTextField(required=False, allow_blank=True, max_length=20_000)
    feedback = FeedbackInput(required=False)
    inputs = serializers.JSONField(required=False, help_text="Refused: inputs cannot be edited.")


class EpisodeRecallInput(serializers.Serializer):
    inputs = InputsField()
    agent = serializers.RegexField(AGENT_PATTERN, **AGENT_FIELD)
    limit = serializers.IntegerField(min_value=1, max_value=20, required=False)


class ResolveInput(DuplicateChoiceInput):
    input = StrictTextField(max_length=200_000)
    resolution_comment = StrictTextField(max_length=20_000)
    outcome = StrictTextField(max_length=2_000)
    agent = serializers.RegexField(AGENT_PATTERN, **AGENT_FIELD)


class EscalationMatchInput(serializers.Serializer):
    input = StrictTextField(max_length=200_000)
    agent = serializers.RegexField(AGENT_PATTERN, **AGENT_FIELD)


class FeedbackOutput(serializers.Serializer):
    sentiment = serializers.CharField(allow_null=True)
    comment = serializers.CharField(allow_null=True)


class ArgumentScore(serializers.Serializer):
    semantic = serializers.FloatField()
    keyword = serializers.FloatField()
    weight = serializers.FloatField()
    score = serializers.FloatField()


class EpisodeOutput(serializers.Serializer):
    id = serializers.UUIDField()
    kind = serializers.ChoiceField(choices=Episode.Kind.choices)
    agent = serializers.CharField()
    inputs = serializers.DictField(child=serializers.JSONField())
    search_keys = serializers.DictField(
        child=serializers.CharField(), help_text="Per argument, the text that is embedded and matched."
    )
    output = serializers.CharField(required=False, allow_null=True)
    outcome = serializers.CharField(allow_null=True)
    feedback = FeedbackOutput(required=False, allow_null=True)
    resolution_comment = serializers.CharField(required=False, allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class ScoredEpisodeOutput(EpisodeOutput):
    score = serializers.FloatField()
    arguments = serializers.DictField(child=ArgumentScore())


class StoreOutput(serializers.Serializer):
    action = serializers.ChoiceField(choices=["created", "replaced", "merged", "added"])
    episode = EpisodeOutput()
    replaced_id = serializers.UUIDField(required=False)
    duplicates = ScoredEpisodeOutput(many=True)


class EpisodeRecallOutput(serializers.Serializer):
    episodes = ScoredEpisodeOutput(many=True)
    threshold = serializers.FloatField()
    search_keys = serializers.DictField(child=serializers.FloatField(), help_text="The argument weights used.")


class EscalationMatchOutput(serializers.Serializer):
    apply = serializers.BooleanField()
    outcome = serializers.CharField(required=False, allow_blank=True)
    resolution_comment = serializers.CharField(required=False, allow_blank=True)
    score = serializers.FloatField(required=False)
    episode_id = serializers.UUIDField(required=False)
    best_score = serializers.FloatField(required=False, allow_null=True)
    threshold = serializers.FloatField()
