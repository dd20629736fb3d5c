"""Issue 33: a project configuration file (`gpcheck.toml` or `[tool.gpcheck]` in pyproject.toml)
gives the command line's defaults, and `gpcheck completion SHELL` prints a completion script."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gpcheck.checker.cli.command import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("GPCHECK_NO_CONFIG", raising=False)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # the file is found in a folder above
    return tmp_path


def _verify_json(capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    import json

    main(["verify", "reef_rewind", "--json", *extra])
    return json.loads(capsys.readouterr().out)


def test_pyproject_table_sets_defaults_and_the_command_line_wins(project: Path, capsys) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.gpcheck]\nconst = { N = 3 }\n\n'
                                            '[tool.gpcheck.verify]\nproperty = ["no_reexecution"]\n')
    doc = _verify_json(capsys)
    assert doc["constants"]["N"] == 3 and [r["property"] for r in doc["results"]][0] == "no_reexecution"
    assert {r["property"] for r in doc["results"]} <= {"no_reexecution", "deadlock", "range"}
    doc = _verify_json(capsys, "--property", "no_loss", "--const", "N=2")
    assert doc["constants"]["N"] == 2 and "no_reexecution" not in {r["property"] for r in doc["results"]}


def test_gpcheck_toml_and_errors_name_the_line(project: Path, capsys) -> None:
    (project / "gpcheck.toml").write_text("[verify]\nengine = \"explicit\"\nbogus = 1\n")
    assert main(["verify", "reef_rewind"]) == 2
    assert "gpcheck.toml:3: gpcheck verify has no option --bogus" in capsys.readouterr().err
    (project / "gpcheck.toml").write_text("timeout = 5\n")
    assert main(["verify", "reef_rewind"]) == 2
    assert "gpcheck.toml:1" in capsys.readouterr().err
    (project / "gpcheck.toml").write_text("[verify\n")
    assert main(["verify", "reef_rewind"]) == 2
    assert "not valid TOML" in capsys.readouterr().err


def test_no_config_switch(project: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "gpcheck.toml").write_text("[verify]\nbogus = 1\n")
    monkeypatch.setenv("GPCHECK_NO_CONFIG", "1")
    assert main(["verify", "reef_rewind", "--const", "N=2", "--property", "no_loss"]) == 0


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_script(shell: str, capsys) -> None:
    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    assert "verify" in script and "--for-all" in script
    if shell == "bash":
        r = subprocess.run(["bash", "-c", script + "\ncomplete -p gpcheck"], capture_output=True, text=True)
        assert r.returncode == 0 and "gpcheck" in r.stdout
