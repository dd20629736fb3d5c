"""Every failure a result or a clear error (issue 36, item 4): a standard output that cannot
take the report, Ctrl-C from the first instant, output targets that are not regular files, a
folder that cannot be written, a name too long: exit 2 (130 for Ctrl-C) with a message, no
traceback, nothing the user gave replaced, and the refusals come before the work."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpcheck.checker.cli.command import main
from gpcheck.spec.errors import TraceError
from gpcheck.traces.atomic import AtomicFile, write_atomic

ROOT = Path(__file__).resolve().parents[2]
TRACE = str(ROOT / "traces" / "corpus" / "sim" / "blp-full.jsonl")


def _gpcheck(*argv: str, **kw) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "gpcheck", *argv], env=env, text=True, timeout=300,
                          stderr=subprocess.PIPE, **kw)


def _is_device(path: str) -> bool:
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


# check's JSON report takes verify's path (write_out's bytes), a subcommand's help the top-level
# help's (argparse's): slow, with those their counterparts (each case is a child, 0.5 s of CPU)
@pytest.mark.skipif(not _is_device("/dev/full"), reason="no /dev/full device")
@pytest.mark.parametrize("argv", [["verify", "blp"], ["verify", "blp", "--json"],
                                  pytest.param(["check", TRACE, "--json"], marks=pytest.mark.slow),
                                  ["--help"], ["--version"], pytest.param(["verify", "--help"], marks=pytest.mark.slow)])
def test_a_full_standard_output_is_exit_2(argv: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        proc = _gpcheck(*argv, stdout=full)
    assert proc.returncode == 2, proc.stderr
    assert "standard output" in proc.stderr and "Traceback" not in proc.stderr


def test_a_closed_standard_output_is_exit_2() -> None:
    proc = _gpcheck("verify", "blp", stdout=subprocess.DEVNULL, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2 and "standard output is closed" in proc.stderr and "Traceback" not in proc.stderr


def test_a_reader_that_goes_away_is_not_an_error() -> None:  # `gpcheck verify x | head -1`: as before
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([sys.executable, "-m", "gpcheck", "verify", "blp"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.read(10)
    p.stdout.close()
    assert p.wait(timeout=300) == 0 and b"Traceback" not in p.stderr.read()


@pytest.mark.slow  # it sends signals at wall-clock delays: timing-dependent on a loaded machine
def test_ctrl_c_during_the_imports_is_exit_130() -> None:
    """SIGINT as soon as gpcheck's first line ran (the imports of the next 0.6 s included)."""
    import site

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *site.getsitepackages()])}
    codes = []
    for delay in (0.05, 0.1, 0.2, 0.3, 0.45, 0.6):
        # -S: no .pth files (an editable install's finder runs in `site`, before any line of ours)
        p = subprocess.Popen([sys.executable, "-S", "-m", "gpcheck", "verify", "blp"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
        text = err.decode()
        frames = [line for line in text.splitlines() if line.strip().startswith("File ")]
        ours = [f for f in frames if str(ROOT) in f]
        assert not ours, text  # a traceback through gpcheck's code: the quiet stop was not installed
        if "Traceback" not in text:
            assert p.returncode in (130, 0, 1, -signal.SIGINT), (delay, p.returncode, text)
        codes.append(p.returncode)
    assert 130 in codes


def test_output_targets_that_are_not_regular_files_are_refused_before_the_work(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "dir").mkdir()
    long_name = str(tmp_path / ("x" * 300 + ".json"))
    targets = [(str(fifo), "a FIFO"), (str(tmp_path / "dir"), "a directory"),
               (str(tmp_path / "missing" / "a.json"), "no such directory"), (long_name, "file name too long")]
    if os.geteuid() == 0:  # a device node of our own (/dev/full's numbers): the real one is never at risk
        dev = tmp_path / "full"
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        targets.append((str(dev), "a device"))
    for target, why in targets:
        for argv in (["replay", TRACE, "--perfetto", target], ["replay", TRACE, "--itf", target],
                     ["verify", "blp", "--itf", target], ["simulate", "blp", "--steps", "3", "--out", target],
                     ["sweep", "blp", "--const", "N=1", "--html", target]):
            assert main(argv) == 2, (argv, why)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and (tmp_path / "dir").is_dir()
    if os.geteuid() == 0:
        assert stat.S_ISCHR(os.stat(tmp_path / "full").st_mode)  # not replaced by a regular file


def test_the_refusal_comes_before_the_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    assert main(["sweep", "blp", "--const", "N=1,2", "--html", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--html" in err and "a directory" in err and "checking" not in err  # no cluster was started
    assert time.monotonic() - started < 30


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a read-only folder")
def test_a_read_only_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    assert main(["sweep", "blp", "--const", "N=1", "--html", str(ro / "a.html")]) == 2
    assert "cannot write in the directory" in capsys.readouterr().err


def test_the_atomic_writer_never_replaces_a_non_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(TraceError, match="not a regular file"):
        write_atomic(str(fifo), b"x")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    target = tmp_path / "t.json"  # becomes a FIFO between the start and the commit
    out = AtomicFile(str(target))
    out.file.write(b"{}")
    os.mkfifo(target)
    with pytest.raises(TraceError, match="not a regular file"):
        out.commit()
    assert stat.S_ISFIFO(os.stat(target).st_mode) and sorted(os.listdir(tmp_path)) == ["fifo", "t.json"]


def test_a_failed_write_part_way_is_an_error_and_leaves_nothing(tmp_path: Path) -> None:
    code = ("import resource, sys\nresource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))\n"
            "from gpcheck.traces.atomic import write_atomic\nfrom gpcheck.spec.errors import TraceError\n"
            f"try:\n    write_atomic({str(tmp_path / 'big.json')!r}, b'x' * 100000)\n"
            "except TraceError as e:\n    print(e)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}  # the limit would cut a .pyc short
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert "big.json: cannot write: File too large" in proc.stdout, proc.stderr
    assert os.listdir(tmp_path) == []


def test_a_fanned_out_run_cut_by_the_memory_limit_is_unknown_not_interrupted() -> None:
    from gpcheck.checker.core import budget
    from gpcheck.checker.cli.commands.fanout import interrupted_exit_code

    with budget.activate(enforce=False):  # a stop here must not be raised into the test itself
        budget.request_stop(budget.MEMORY, "memory limit 1 GiB reached")
        assert interrupted_exit_code() == 3
    with budget.activate(enforce=False):
        budget.request_stop(budget.INTERRUPTED, "interrupted (SIGTERM)", signal.SIGTERM)
        assert interrupted_exit_code() == 143
    assert interrupted_exit_code() == 130  # a KeyboardInterrupt without a budget


@pytest.mark.parametrize("orig, argv0, command", [
    (["python", "-S", "-m", "gpcheck", "verify"], "-m", True),
    (["python", "-X", "importtime", "-mgpcheck"], "-m", True),
    (["/venv/bin/python", "/venv/bin/gpcheck", "verify"], "/venv/bin/gpcheck", True),
    (["python", "-m", "pytest"], "-m", False),  # a program that imports gpcheck keeps its handlers
    (["python", "app.py"], "app.py", False),
    (["python", "-c", "import gpcheck"], "-c", False),
])
def test_the_package_knows_when_it_is_the_command(orig: list[str], argv0: str, command: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The quiet stop of test_ctrl_c_during_the_imports_is_exit_130 (slow: signals at wall-clock
    delays) is installed by the package's first lines exactly when it runs as the command."""
    import gpcheck

    monkeypatch.setattr(sys, "orig_argv", orig)
    monkeypatch.setattr(sys, "argv", [argv0])
    assert gpcheck._run_as_the_command() is command
