"""The README's tour and the package's own docstring run as doctests: they cannot go stale."""

import doctest
import pathlib
import re

import datalith

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_tour_runs_as_written():
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "the README has no python block"
    for block in blocks:
        test = doctest.DocTestParser().get_doctest(block, {}, "README", str(README), 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test)
        assert runner.failures == 0, block


def test_the_package_docstring_runs():
    failures, tried = doctest.testmod(datalith)
    assert tried > 0 and failures == 0
