from rest_framework import serializers

from tenants import space_settings
from tenants.models import EXTERNAL_ID_PATTERN, Space


class SpaceCreateInput(serializers.Serializer):
    external_id = serializers.RegexField(EXTERNAL_ID_PATTERN, max_length=128)
    kind = serializers.ChoiceField(choices=Space.Kind.choices, default=Space.Kind.END_USER)
    display_name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    settings = serializers.DictField(required=False, default=dict)
    key_id = serializers.CharField(max_length=64, required=False)


class SpaceUpdateInput(serializers.Serializer):
    display_name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    settings = serializers.DictField(required=False, allow_null=False)

    def validate(self, attrs):
        unknown = set(self.initial_data) - set(self.fields)
        if "key_id" in unknown:
            raise serializers.ValidationError({"key_id": ["A space's key id is fixed when it is created."]})
        if unknown:
            raise serializers.ValidationError({name: ["Unknown or read-only field."] for name in sorted(unknown)})
        return attrs


class SpaceOutput(serializers.ModelSerializer):
    effective_settings = serializers.SerializerMethodField()

    class Meta:
        model = Space
        fields = ["external_id", "kind", "display_name", "key_id", "settings", "effective_settings", "created_at"]

    def get_effective_settings(self, space) -> dict:
        return space_settings.effective_settings(space)
