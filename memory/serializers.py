from rest_framework import serializers

from memory.models import Memory, Message


class StrictTextField(serializers.CharField):
    """Text only: a number or a list is a 400, not silently turned into a string."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class TurnInput(serializers.Serializer):
    message = StrictTextField(trim_whitespace=False, allow_blank=True)
    session_id = serializers.RegexField(r"^[A-Za-z0-9._:@-]{1,128}$", required=False)
    message_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    channel = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    at = serializers.DateTimeField(required=False)
    create_space = serializers.BooleanField(required=False, default=False)


class TranscriptMessageInput(serializers.Serializer):
    role = serializers.ChoiceField(choices=Message.Role.choices)
    content = StrictTextField(trim_whitespace=False, allow_blank=True)
    id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    at = serializers.DateTimeField(required=False)


class IngestInput(serializers.Serializer):
    session_id = serializers.RegexField(r"^[A-Za-z0-9._:@-]{1,128}$", required=False)
    messages = TranscriptMessageInput(many=True, allow_empty=False)
    create_space = serializers.BooleanField(required=False, default=False)


class ReplyInput(serializers.Serializer):
    content = StrictTextField(trim_whitespace=False, allow_blank=True)


class MemoryOutput(serializers.ModelSerializer):
    session_id = serializers.CharField(source="source_session.external_id", default=None, read_only=True)
    superseded_by = serializers.UUIDField(source="superseded_by_id", read_only=True)
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
            "created_at",
            "updated_at",
        ]


class MemoryBrief(serializers.Serializer):
    id = serializers.UUIDField()
    kind = serializers.CharField()
    content = serializers.CharField()
    topic = serializers.CharField(allow_null=True)


class RejectedOutput(serializers.Serializer):
    content = serializers.CharField()
    reason = serializers.CharField()


class TurnOutput(serializers.Serializer):
    turn_id = serializers.UUIDField()
    session_id = serializers.CharField()
    status = serializers.CharField()
    created = MemoryBrief(many=True, required=False)
    merged = MemoryBrief(many=True, required=False)
    superseded = serializers.ListField(child=serializers.UUIDField(), required=False)
    rejected = RejectedOutput(many=True, required=False)
    error = serializers.CharField(required=False, allow_blank=True)


class MemoryUpdateInput(serializers.Serializer):
    content = serializers.CharField(required=False, max_length=4000)
    topic = serializers.CharField(required=False, allow_blank=True, max_length=200)
    importance = serializers.FloatField(required=False, min_value=0.0, max_value=1.0)


class ReplyOutput(serializers.Serializer):
    message_id = serializers.UUIDField()
    session_id = serializers.CharField()
