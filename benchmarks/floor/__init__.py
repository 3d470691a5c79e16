"""The framework floor: what Django, Channels, Daphne and htmx's ws extension cost on their own.

A self-contained ASGI app (``asgi.py``, its own ``settings.py``, nothing of
kandev-web) with one page and one consumer, and ``probe.py``, which drives it
from ``benchmarks.latency``: a trigger makes the server ``group_send`` one small
``hx-swap-oob`` fragment, and the time until the element exists in the page is
the floor the product's live paths are put against.
"""
