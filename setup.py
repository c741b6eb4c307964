"""What pyproject.toml cannot say: the package list with the bundled suites mapped into it.

The conformance suites stay at the top of the repository (``scenarios/``), where the
project's layout puts them, and ship inside the package as ``streamproof.scenarios``: setuptools
maps that package to the folder, so a wheel carries the files and an editable install points
at the repository's own folder. Nothing is copied by hand. The canned streams in
``fixtures/`` ship the same way as ``streamproof.fixtures``, so a bundled scenario's
``fixture: fixtures/...`` finds them from ``streamproof/scenarios/<suite>/`` upward. Everything else is
configured in pyproject.toml; ``harness/streamproof/runtime/bundled.py`` finds the suites at run time.
"""

from setuptools import find_namespace_packages, setup

SOURCE = "harness"
SUITES = "scenarios"
FIXTURES = "fixtures"
# The source is harness/streamproof/; the harness's own tests (harness/tests/) stay in the
# repository, outside the package: the wheel holds what a user runs. The node_modules of the
# Node oracles and of the browser-client reference pages is installed beside each project by
# scripts/install-node-oracles.
NOT_PACKAGES = [
    "__pycache__",
    "*.__pycache__",
    "streamproof.suites.gateway.oracles.node.*",
    "streamproof.suites.browser_client.reference.node.*",
]

setup(
    packages=[
        *find_namespace_packages(
            SOURCE, include=["streamproof", "streamproof.*"], exclude=NOT_PACKAGES
        ),
        "streamproof.scenarios",
        # One folder per suite (gateway/, a2a_client/): listed so that their files are
        # package data of a known package, not of an unlisted namespace.
        *(
            f"streamproof.scenarios.{name}"
            for name in find_namespace_packages(SUITES, exclude=NOT_PACKAGES)
        ),
        # The canned streams (fixtures/gemini, fixtures/a2a/0.3, ...): each folder whose name
        # could be a package is listed as one (setuptools warns about data in an unlisted
        # one); the version folders ("0.3") are no package names and stay data of a2a.
        "streamproof.fixtures",
        *(f"streamproof.fixtures.{name}" for name in find_namespace_packages(FIXTURES)),
    ],
    package_dir={
        "streamproof": f"{SOURCE}/streamproof",
        "streamproof.scenarios": SUITES,
        "streamproof.fixtures": FIXTURES,
    },
)
