"""Capability bundles: sandbox tools packaged in the runner image; they hold no credential."""

from django.db import models

from .orgs import Organization


class Access(models.TextChoices):
    READ = "read"
    WRITE = "write"


class CapabilityBundle(models.Model):
    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="bundles")
    name = models.SlugField(max_length=100)
    content = models.TextField(blank=True, help_text="The YAML as imported")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "name"], name="bundle_unique_name")]

    def __str__(self) -> str:
        return self.name


class BundleTool(models.Model):
    bundle = models.ForeignKey(CapabilityBundle, on_delete=models.CASCADE, related_name="tools")
    name = models.CharField(max_length=128)
    access = models.CharField(max_length=8, choices=Access.choices, default=Access.WRITE)
    match_argument = models.JSONField(null=True, blank=True)
    secrets = models.BooleanField(default=False)
    schema = models.JSONField(default=dict)
    definition_digest = models.CharField(max_length=64)

    class Meta:
        ordering = ["bundle", "name"]
        constraints = [
            models.UniqueConstraint(fields=["bundle", "name"], name="bundle_tool_unique_name")
        ]

    def __str__(self) -> str:
        return self.name
