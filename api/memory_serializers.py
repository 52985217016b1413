from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory import dedup, provenance
from memory.models import Memory, Message
from tenants.models import EXTERNAL_ID_PATTERN


class StrictTextField(serializers.CharField):
    """Text only: a number or a list is a 400, not silently turned into a string."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


def room_for_memories() -> serializers.IntegerField:
    return serializers.IntegerField(
        required=False,
        min_value=100,
        max_value=100_000,
        help_text="Room for prompt lines, in characters: the memories that fit, best first; once something "
        "answers, the room left holds the next nearest statements. `left_out` counts answering memories that "
        "did not fit.",
    )


class TurnInput(serializers.Serializer):
    message = StrictTextField(trim_whitespace=False, allow_blank=True)
    session_id = serializers.RegexField(EXTERNAL_ID_PATTERN, required=False)
    message_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    channel = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    at = serializers.DateTimeField(required=False)
    create_space = serializers.BooleanField(required=False, default=False)
    provenance = serializers.BooleanField(required=False, default=False, help_text="Add each memory's source.")
    max_chars = room_for_memories()


class TranscriptMessageInput(serializers.Serializer):
    role = serializers.ChoiceField(choices=Message.Role.choices)
    content = StrictTextField(trim_whitespace=False, allow_blank=True)
    id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    at = serializers.DateTimeField(required=False)


class IngestInput(serializers.Serializer):
    session_id = serializers.RegexField(EXTERNAL_ID_PATTERN, required=False)
    messages = TranscriptMessageInput(many=True, allow_empty=False)
    create_space = serializers.BooleanField(required=False, default=False)


class ReplyInput(serializers.Serializer):
    content = StrictTextField(trim_whitespace=False, allow_blank=True)


class SourceOutput(serializers.Serializer):
    session_id = serializers.CharField(allow_null=True)
    message_id = serializers.CharField(allow_null=True, help_text="The message_id the caller sent, if any.")
    turn_id = serializers.UUIDField(allow_null=True)
    said_at = serializers.DateTimeField(allow_null=True)


class MemoryOutput(serializers.ModelSerializer):
    session_id = serializers.CharField(source="source_session.external_id", default=None, read_only=True)
    superseded_by = serializers.UUIDField(source="superseded_by_id", read_only=True, allow_null=True)
    content = serializers.CharField(read_only=True)
    topic = serializers.CharField(read_only=True, allow_null=True)

    class Meta:
        model = Memory
        fields = [
            "id",
            "kind",
            "content",
            "topic",
            "importance",
            "mention_count",
            "session_id",
            "event_at",
            "superseded_by",
            "superseded_reason",
            "created_at",
            "updated_at",
            "source",
        ]

    source = serializers.SerializerMethodField(help_text="Where it came from: session, message_id, turn, time.")

    @extend_schema_field(SourceOutput)
    def get_source(self, memory) -> dict:
        # One batch for the whole list (the parent's instance), so a page costs a fixed number of queries.
        if "_sources" not in self.__dict__:
            batch = self.parent.instance if self.parent is not None else [self.instance]
            self._sources = provenance.sources_for(batch)
        return self._sources.get(memory.pk) or provenance.sources_for([memory])[memory.pk]


class MemoryBrief(serializers.Serializer):
    id = serializers.UUIDField()
    kind = serializers.CharField()
    content = serializers.CharField()
    topic = serializers.CharField(allow_null=True)


class RejectedOutput(serializers.Serializer):
    content = serializers.CharField()
    reason = serializers.CharField()


class RecallInput(serializers.Serializer):
    query = StrictTextField(max_length=32 * 1024)  # trimmed, and blank is a 400
    limit = serializers.IntegerField(required=False, min_value=1, max_value=50)
    kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=Memory.Kind.choices), required=False, allow_empty=False
    )
    synthesize = serializers.BooleanField(required=False, default=False)
    provenance = serializers.BooleanField(required=False, default=False, help_text="Add each memory's source.")
    max_chars = room_for_memories()


class ScoreOutput(serializers.Serializer):
    distance = serializers.FloatField(allow_null=True)
    ranks = serializers.DictField(child=serializers.IntegerField(allow_null=True))
    fused = serializers.FloatField()
    relevance = serializers.FloatField(
        allow_null=True,
        help_text="The learned gate's probability that the memory answers the query (null: not judged).",
    )


class RecalledMemory(serializers.Serializer):
    id = serializers.UUIDField()
    kind = serializers.CharField()
    content = serializers.CharField()
    topic = serializers.CharField(allow_null=True)
    importance = serializers.FloatField(allow_null=True)
    event_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField()
    score = ScoreOutput()
    source = SourceOutput(required=False)


class RecallOutput(serializers.Serializer):
    memories = RecalledMemory(many=True)
    prompt = serializers.CharField(allow_blank=True)
    answer = serializers.CharField(allow_null=True, required=False)
    synthesis = serializers.CharField(required=False)
    warning = serializers.CharField(required=False)
    left_out = serializers.IntegerField(
        required=False, help_text="With `max_chars`: memories that answer but did not fit in the room."
    )


class TurnOutput(serializers.Serializer):
    turn_id = serializers.UUIDField()
    session_id = serializers.CharField()
    status = serializers.CharField()
    memories = RecalledMemory(many=True, required=False)
    prompt = serializers.CharField(required=False, allow_blank=True)
    left_out = serializers.IntegerField(
        required=False, help_text="With `max_chars`: memories that answer but did not fit in the room."
    )
    recall_warning = serializers.CharField(required=False)
    forgotten = serializers.ListField(child=serializers.DictField(), required=False)
    confirmation = serializers.CharField(required=False, allow_blank=True)
    more_matched = serializers.IntegerField(required=False)
    needs_operator = serializers.BooleanField(
        required=False, help_text="A request to erase everything: only the operator's erasure can do it; route it."
    )
    created = MemoryBrief(many=True, required=False)
    merged = MemoryBrief(many=True, required=False)
    superseded = serializers.ListField(child=serializers.UUIDField(), required=False)
    held_back = serializers.ListField(
        child=serializers.UUIDField(),
        required=False,
        help_text="Memories this turn created beside an older value instead of superseding it, because the turn "
        "had reached its supersession limit (ENGRAM_TURN_MAX_SUPERSESSIONS).",
    )
    rejected = RejectedOutput(many=True, required=False)
    error = serializers.CharField(required=False, allow_blank=True)
    derived_offline = serializers.BooleanField(
        required=False,
        help_text="The chat model stayed down past ENGRAM_MODEL_WAIT_SECONDS, so the offline engine derived this "
        "turn's memories; error says how long it waited.",
    )


class MemoryUpdateInput(serializers.Serializer):
    content = serializers.CharField(required=False, max_length=dedup.MAX_CONTENT_CHARS)
    topic = serializers.CharField(required=False, allow_blank=True, max_length=dedup.MAX_TOPIC_CHARS)
    importance = serializers.FloatField(required=False, min_value=0.0, max_value=1.0)


class ReplyOutput(serializers.Serializer):
    message_id = serializers.UUIDField()
    session_id = serializers.CharField()


class ForgetInput(serializers.Serializer):
    utterance = StrictTextField(max_length=32 * 1024)
    dry_run = serializers.BooleanField(required=False, default=False)


class ForgottenOutput(serializers.Serializer):
    id = serializers.UUIDField()
    kind = serializers.CharField()
    content = serializers.CharField()


class ForgetCandidateOutput(ForgottenOutput):
    distance = serializers.FloatField()


class ForgetOutput(serializers.Serializer):
    dry_run = serializers.BooleanField()
    is_forget_request = serializers.BooleanField()
    forgotten = ForgottenOutput(many=True)
    more_matched = serializers.IntegerField()
    confirmation = serializers.CharField(allow_blank=True)
    needs_operator = serializers.BooleanField(
        help_text="A request to erase everything: only the operator's erasure can do it; route it."
    )
    limits = serializers.DictField()
    candidates = ForgetCandidateOutput(many=True)


class DeletionOutput(serializers.Serializer):
    id = serializers.UUIDField()
    occurred_at = serializers.DateTimeField()
    space = serializers.CharField(source="space_external_id")
    memory_id = serializers.UUIDField()
    memory_kind = serializers.CharField()
    cause = serializers.CharField()
    turn_id = serializers.UUIDField(allow_null=True)
    actor = serializers.CharField()
    matched_distance = serializers.FloatField(allow_null=True)
    limits = serializers.DictField()
    content_digest = serializers.CharField()


class DeletionCheckInput(serializers.Serializer):
    space = serializers.RegexField(EXTERNAL_ID_PATTERN, max_length=128)
    text = StrictTextField(max_length=32 * 1024)
