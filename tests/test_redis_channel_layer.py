"""With Redis, a socket with nothing to hear keeps its consumer: the layer's blocking read outlasts its wait."""

from testing_support.deployment import run_clean

IDLE_RECEIVE = """
import asyncio
import django
django.setup()
from channels.layers import get_channel_layer

async def idle():
    layer = get_channel_layer()
    channel = await layer.new_channel()
    try:
        # Past channels-redis's 5 s BZPOPMIN and redis-py's default 5 s read timeout.
        await asyncio.wait_for(layer.receive(channel), timeout=8)
    except asyncio.TimeoutError:
        print("still waiting")
    except Exception as error:
        print(f"died: {type(error).__module__}.{type(error).__name__}")

asyncio.run(idle())
"""


def test_an_idle_receive_on_redis_is_still_waiting_after_the_blocking_pop_times_out(redis_url, tmp_path):
    result = run_clean(
        tmp_path,
        "-c",
        IDLE_RECEIVE,
        REDIS_URL=redis_url,
        KANDEV_CHANNEL_PREFIX="kandev-test-idle",
        KANDEV_SILENCED_CHECKS="kandev.E001,kandev.E002",
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "still waiting"
