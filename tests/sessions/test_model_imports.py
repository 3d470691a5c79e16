"""Loading the models imports no network client.

Every process loads them (a management command, a migration, a check), and
only a few talk to machines: asyncssh and the agent stream's websockets are
imported by what does (``repositories/hosts.py``, the runner), not by the models.
"""

import json
import os
import subprocess
import sys

#: Run in a fresh interpreter: this one has imported everything long ago. What
#: ``sys.modules`` holds once the last app's models are imported, before any
#: ``AppConfig.ready()`` (which connects receivers, and may import the runner).
PROBE = """
import json, sys
import django
from django.apps.config import AppConfig

import_models = AppConfig.import_models
loaded = set()

def recording(config):
    import_models(config)
    loaded.update(sys.modules)

AppConfig.import_models = recording
django.setup()
print(json.dumps(sorted(name for name in loaded if name.partition(".")[0] in ("asyncssh", "websockets"))))
"""


def test_loading_the_models_imports_neither_asyncssh_nor_websockets():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "kandev_web.settings"}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
