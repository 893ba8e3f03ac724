"""The stubs type-check a program that uses the package, under `mypy --strict`."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).with_name("typed_example.py")


def test_an_example_passes_mypy_strict():
    pytest.importorskip("mypy")
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_example_runs():
    out = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
