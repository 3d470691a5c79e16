"""ACP form elicitation, the pure half: no I/O, no asyncio, no Django.

- `mapping`     `elicitation/create` params -> `MappedForm` or `Decline` (rules 1-5, D2, limits)
- `ordering`    D1, the order questions are presented in
- `credentials` which questions look like they ask for a secret
- `answers`     F10 validation and F12 normalisation of `agent.elicitations.respond` answers
- `response`    the ACP result: sparse `accept` content, `decline`, `cancel`; what is reported of it
- `types`       the frozen values passed between them, and their wire shapes
"""

from kandev_web.agentctl.elicitation.answers import (
    InvalidAnswers,
    Problem,
    ProblemCode,
    normalise,
    validate_answers,
)
from kandev_web.agentctl.elicitation.mapping import map_elicitation
from kandev_web.agentctl.elicitation.ordering import d1_key, d1_sorted
from kandev_web.agentctl.elicitation.response import (
    build_response,
    cancel_response,
    decline_response,
    reported_response,
)
from kandev_web.agentctl.elicitation.types import (
    Answer,
    Decline,
    DeclineReason,
    MappedForm,
    Option,
    Question,
)

__all__ = [
    "Answer",
    "Decline",
    "DeclineReason",
    "InvalidAnswers",
    "MappedForm",
    "Option",
    "Problem",
    "ProblemCode",
    "Question",
    "build_response",
    "cancel_response",
    "d1_key",
    "d1_sorted",
    "decline_response",
    "map_elicitation",
    "normalise",
    "reported_response",
    "validate_answers",
]
