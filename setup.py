"""Everything is in pyproject.toml; this only puts the demo into the wheel.

``arena init`` writes the sample bots and the demo tournament file into a folder. From a checkout
it copies them from sample_bots/ and tournaments/; an installed wheel carries the same files as
package data under arena/demo/, copied here at build time so the checkout keeps one copy.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# Caches and what building a sample bot in place writes: arena/bots/samples.py's BUILD_OUTPUTS
# (not imported: the build may run without the arena's dependencies).
SKIP = shutil.ignore_patterns(
    "__pycache__", "*.pyc", "*.o", "random_bot", "random_bot_c", "target", "classes", "starter_bot"
)


class BuildWithDemo(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "arena" / "demo"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(ROOT / "sample_bots", target / "sample_bots", ignore=SKIP)
        (target / "tournaments").mkdir(parents=True)
        shutil.copy2(ROOT / "tournaments" / "demo.toml", target / "tournaments" / "demo.toml")


setup(cmdclass={"build_py": BuildWithDemo})
