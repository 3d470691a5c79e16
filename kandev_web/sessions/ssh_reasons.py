"""Why an executor host could not be used, in the operator's words.

``executor.ssh`` says what failed (``SshFailure``) in SSH's own English;
the sentences a person reads, on the task page or a profile's check, are
written here, once, for every caller.
"""

from django.utils.translation import gettext as _

from kandev_web.executor.address import SshAddress
from kandev_web.executor.ssh import SshError, SshFailure


def ssh_reason(address: SshAddress | None, error: SshError) -> str:
    """Why an agent could not start over SSH, for the task page."""
    where = {"host": address.url if address else "", "detail": error.detail}
    sentences = {
        SshFailure.NO_HOST_KEY: _(
            "No host key is recorded for the executor host %(host)s, so it was not contacted. Record its key "
            "(ssh-keyscan output, checked out of band) on the executor."
        ),
        SshFailure.HOST_KEY_MISMATCH: _(
            "The executor host %(host)s showed another host key than the one recorded, so nothing was started: "
            "it may not be the host you registered. If its key really changed, record the new one on the executor."
        ),
        SshFailure.UNREACHABLE: _("The executor host %(host)s could not be reached over SSH: %(detail)s"),
        SshFailure.REFUSED_LOGIN: _("The executor host %(host)s refused the SSH login: %(detail)s"),
        SshFailure.NOT_STARTED: _("The executor host %(host)s could not start the agent: %(detail)s"),
    }
    return sentences[error.failure] % where
