"""The sessions app's models, one module per concern; imported from here, as ``sessions.models``."""

from .agents import AgentProfile, AgentProfileQuerySet, Executor, SealedTextField, secret_box, validate_mcp_servers
from .repositories import Repository, RepositoryQuerySet, Worktree
from .sessions import (
    ACTIVE_SESSION_STATES,
    Activity,
    AgentExecution,
    AuthorType,
    Message,
    MessageType,
    SessionState,
    TaskSession,
    TaskSessionQuerySet,
    Turn,
    current_turn_of,
)

__all__ = [
    "ACTIVE_SESSION_STATES",
    "Activity",
    "AgentExecution",
    "AgentProfile",
    "AgentProfileQuerySet",
    "AuthorType",
    "Executor",
    "Message",
    "MessageType",
    "Repository",
    "RepositoryQuerySet",
    "SealedTextField",
    "SessionState",
    "TaskSession",
    "TaskSessionQuerySet",
    "Turn",
    "Worktree",
    "current_turn_of",
    "secret_box",
    "validate_mcp_servers",
]
