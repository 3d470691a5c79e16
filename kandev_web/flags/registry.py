"""The runtime flags this build knows, declared in code.

A flag's *definition* never changes at run time; only its value does (see
``resolution``). Keys follow Kandev's naming: ``features.<camelCase>`` with the
environment variable ``KANDEV_FEATURES_<UPPER_SNAKE>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import TextChoices
from django.utils.translation import gettext_lazy as _

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


class Kind(TextChoices):
    FEATURE = "feature", _("feature")
    DEBUG = "debug", _("debug")


class Stability(TextChoices):
    STABLE = "stable", _("stable")
    BETA = "beta", _("beta")
    EXPERIMENTAL = "experimental", _("experimental")


class RiskLevel(TextChoices):
    LOW = "low", _("low risk")
    MEDIUM = "medium", _("medium risk")
    HIGH = "high", _("high risk")


@dataclass(frozen=True, slots=True)
class FlagDefinition:
    key: str
    env_var: str
    kind: Kind
    label: StrOrPromise
    description: StrOrPromise
    stability: Stability
    risk_level: RiskLevel
    risk_description: StrOrPromise
    restart_required: bool
    mutable: bool
    default: bool = False


ACP_ELICITATION = "features.acpElicitation"
ACP_URL_ELICITATION = "features.acpUrlElicitation"
ACP_BOOLEAN_CONFIG_OPTIONS = "features.acpBooleanConfigOptions"

FLAGS: dict[str, FlagDefinition] = {
    flag.key: flag
    for flag in [
        FlagDefinition(
            key=ACP_ELICITATION,
            env_var="KANDEV_FEATURES_ACP_ELICITATION",
            kind=Kind.FEATURE,
            label=_("ACP form elicitation"),
            description=_(
                "Advertise form elicitation to ACP agents, so an agent can ask you a "
                "structured question and get the answer in the same turn."
            ),
            stability=Stability.EXPERIMENTAL,
            risk_level=RiskLevel.MEDIUM,
            risk_description=_(
                "Relies on an unstable part of the Agent Client Protocol; agents may change how they ask."
            ),
            restart_required=True,
            mutable=True,
        ),
        FlagDefinition(
            key=ACP_URL_ELICITATION,
            env_var="KANDEV_FEATURES_ACP_URL_ELICITATION",
            kind=Kind.FEATURE,
            label=_("ACP URL elicitation"),
            description=_(
                "Let ACP agents ask you to open a web page, such as an MCP server's sign-in, "
                "and tell them when you have. Needs ACP form elicitation on as well."
            ),
            stability=Stability.EXPERIMENTAL,
            risk_level=RiskLevel.MEDIUM,
            risk_description=_("An agent can put any https address in front of you; it opens only when you click it."),
            restart_required=True,
            mutable=True,
        ),
        FlagDefinition(
            key=ACP_BOOLEAN_CONFIG_OPTIONS,
            env_var="KANDEV_FEATURES_ACP_BOOLEAN_CONFIG_OPTIONS",
            kind=Kind.FEATURE,
            label=_("ACP on/off options"),
            description=_(
                "Tell ACP agents that the composer can show on/off options, so an agent may offer its "
                "boolean settings there as toggles."
            ),
            stability=Stability.BETA,
            risk_level=RiskLevel.LOW,
            risk_description=_(
                "Changes what Kandev tells agents when they start; an agent that does not know the capability "
                "ignores it."
            ),
            restart_required=True,
            mutable=True,
        ),
    ]
}
