"""Capability bundles: imported (and re-imported) as YAML through `bundle_import`."""

from django import forms
from django.contrib import admin

from governance.admin.roles import OrgScopedAdmin, ReadOnlyAdmin
from governance.errors import ServiceError
from governance.models import BundleTool, CapabilityBundle
from governance.services.bundles import bundle_import, parse_bundle


class BundleImportForm(forms.ModelForm):
    content = forms.CharField(
        label="Bundle YAML",
        strip=False,
        widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "false", "class": "fb-code"}),
        help_text="Runs already created keep the tools they froze.",
    )

    class Meta:
        model = CapabilityBundle
        fields = ("org", "content")

    def clean_content(self) -> str:
        text = self.cleaned_data["content"]
        try:
            name, _ = parse_bundle(text)
        except ServiceError as error:
            raise forms.ValidationError(error.detail) from None
        if self.instance.pk and name != self.instance.name:
            raise forms.ValidationError(
                f"This is bundle {self.instance.name!r}; the YAML names {name!r}. "
                "Import a differently named bundle with Add."
            )
        return text


class BundleToolInline(admin.TabularInline):
    model = BundleTool
    fields = ("name", "access", "match_argument", "secrets", "definition_digest")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(CapabilityBundle)
class CapabilityBundleAdmin(OrgScopedAdmin):
    form = BundleImportForm
    list_display = ("name", "org", "tool_count", "updated_at")
    list_filter = ("org",)
    search_fields = ("name",)
    inlines = [BundleToolInline]

    @admin.display(description="tools")
    def tool_count(self, bundle: CapabilityBundle) -> int:
        return bundle.tools.count()

    def get_readonly_fields(self, request, obj=None):
        if obj is not None:
            return ("org",) if self.has_change_permission(request, obj) else ("org", "content")
        return ()

    def save_model(self, request, obj, form, change):
        org = obj.org if change else form.cleaned_data["org"]
        bundle = bundle_import(org=org, text=form.cleaned_data["content"])
        obj.pk, obj.name = bundle.pk, bundle.name

    def save_related(self, request, form, formsets, change):
        """The tools are the import's to write; the inline only shows them."""


@admin.register(BundleTool)
class BundleToolAdmin(ReadOnlyAdmin):
    org_path = "bundle__org"
    hidden_from_index = True
    list_display = ("name", "bundle", "access", "secrets", "definition_digest")
    fields = (
        "bundle",
        "name",
        "access",
        "match_argument",
        "secrets",
        "schema",
        "definition_digest",
    )
    readonly_fields = fields
