"""Issue 33 item 4: what gpcheck costs where it is only present. The pytest plugin is loaded by
every pytest run in an environment where gpcheck is installed, and `gpcheck --version` is the
first thing a user types: neither may import the parser, the engines or Z3. `dir(gpcheck)` shows
the API (`__all__`), which is still imported on first use only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# What the API pulls in; none of it is needed to load the plugin or print the version.
HEAVY = ("gpcheck.checker.api.model_api", "gpcheck.checker.api.testing", "gpcheck.spec.load", "gpcheck.spec.parser",
         "gpcheck.gpmodel", "lark", "z3", "numba", "distributed", "rich")

LOADED = f"sorted(m for m in {HEAVY!r} if m in sys.modules)"  # an expression, in the child


def _python(code: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, *args, "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_loading_the_pytest_plugin_imports_none_of_the_api():
    r = _python(f"import sys, gpcheck.checker.cli.pytest_plugin\nprint({LOADED})")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_a_pytest_session_with_the_plugin_imports_none_of_the_api(tmp_path):
    # (test_pytest_plugin.py runs the assertions, and their failure reports, through the plugin)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not this project's addopts
    (tmp_path / "test_plain.py").write_text(
        "import sys\n"
        f"HEAVY = {HEAVY!r}\n"
        "def test_nothing_heavy_is_loaded():\n"
        "    assert [m for m in HEAVY if m in sys.modules] == []\n"
        "def test_the_fixture_is_there(gpcheck, gpcheck_const):\n"
        "    assert gpcheck_const == {} and callable(gpcheck.assert_holds)\n")
    code = "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))"
    r = subprocess.run(
        [sys.executable, "-c", code, "-p", "gpcheck.checker.cli.pytest_plugin", "-p", "no:cacheprovider",
         "-p", "no:xdist", "-p", "no:hypothesispytest", "-q", "test_plain.py"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"),
        capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed" in r.stdout


def test_version_imports_none_of_the_api():
    # entry() leaves through os._exit after the atexit handlers: the list is printed by one
    r = _python(f"import atexit, sys\natexit.register(lambda: print({LOADED}))\n"
                "sys.argv = ['gpcheck', '--version']\n"
                "from gpcheck.checker.cli.command import entry\n"
                "entry()\n")
    assert r.returncode == 0, r.stderr
    version, modules = r.stdout.strip().splitlines()
    assert version.startswith("gpcheck ")
    assert modules == "[]"


def test_dir_of_the_package_shows_the_api_and_importing_it_stays_light():
    r = _python("import gpcheck, sys\n"
                "print(sorted(gpcheck.__all__))\n"
                "print(all(n in dir(gpcheck) for n in gpcheck.__all__))\n"
                f"print({LOADED})\n")
    assert r.returncode == 0, r.stderr
    names, listed, modules = r.stdout.strip().splitlines()
    import gpcheck
    import gpcheck.checker

    assert names == str(sorted(gpcheck.checker.__all__))
    assert {"verify", "load", "replay", "Verdict", "Report"} <= set(gpcheck.__all__)
    assert listed == "True"
    assert modules == "[]"


@pytest.mark.parametrize("package", ["gpcheck", "gpcheck.checker", "gpcheck.spec"])
def test_every_name_of_all_resolves(package):
    import importlib

    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
        assert name in dir(module)
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018 - the lookup is the test
