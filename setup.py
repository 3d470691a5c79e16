"""Put the project's templates/ and static/ inside the built package, as kandev_web/templates and kandev_web/static.

They live beside the package in the repository (the layout the project
follows), but an installed wheel has no repository around it: the settings
look for them inside the package when there is no checkout
(``kandev_web/settings.py``, ``RESOURCES_DIR``).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
RESOURCES = ("templates", "static")


class BuildWithResources(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return  # an editable install reads them from the checkout
        for name in RESOURCES:
            target = Path(self.build_lib) / "kandev_web" / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(ROOT / name, target)


setup(cmdclass={"build_py": BuildWithResources})
