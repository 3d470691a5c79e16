"""When a failed webhook delivery is tried again, and when it is given up."""


def retry_delay(failed_attempts: int, backoff: tuple[float, ...]) -> float | None:
    """Seconds to wait after ``failed_attempts`` failures before the next try; ``None``: give up.

    ``backoff`` is the wait after each failure in turn (``KANDEV_WEBHOOK_BACKOFF_SECONDS``),
    so a delivery is tried ``len(backoff) + 1`` times in all.
    """
    if failed_attempts < 1 or failed_attempts > len(backoff):
        return None
    return backoff[failed_attempts - 1]
