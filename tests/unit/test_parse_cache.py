"""spec/parser.py keeps the AST of the texts it parsed (issue 33: a mapped replay loads its model
twice, a corpus run once per trace, each load was a lark parse): a load of the same text gives
the same model as a first parse, other constants still give their own instance, and an error is
raised again on every load, never kept."""

from __future__ import annotations

import pytest

from gpcheck.spec import load_source
from gpcheck.spec.errors import SpecSyntaxError
from gpcheck.spec.parser import _parse_spec, parse_spec

SRC = "model m\nconst N = 2\nvar n: 0..N = 0\naction up { require n < N\n  n = n + 1 }\ninvariant low: n <= N\n"


def test_the_same_text_is_parsed_once_and_loads_alike() -> None:
    text = SRC + "# test_the_same_text_is_parsed_once\n"  # a text no other test parsed in this process
    before = _parse_spec.cache_info()
    first = parse_spec(text, "m.gpspec")
    assert parse_spec(text, "m.gpspec") is first
    # CRLF line ends are the same text once normalized: the same tree
    assert parse_spec(text.replace("\n", "\r\n"), "m.gpspec") is first
    after = _parse_spec.cache_info()
    assert after.misses == before.misses + 1 and after.hits == before.hits + 2
    # the file is part of the key: its spans name it
    other = parse_spec(text, "other.gpspec")
    assert other is not first and other.span.file == "other.gpspec" and first.span.file == "m.gpspec"


def test_a_reload_with_other_constants_is_its_own_instance() -> None:
    text = SRC + "# test_a_reload_with_other_constants\n"
    a = load_source(text, "m.gpspec")
    b = load_source(text, "m.gpspec", {"N": 3})
    c = load_source(text, "m.gpspec")
    assert a.const_values["N"] == 2 and b.const_values["N"] == 3 and c.const_values["N"] == 2
    assert c == a and b != a


def test_a_syntax_error_is_raised_on_every_parse() -> None:
    bad = "model m\nvar n: 0..2 = 0\naction up { n = }\n"
    messages = []
    for _ in range(2):
        with pytest.raises(SpecSyntaxError) as e:
            parse_spec(bad, "bad.gpspec")
        messages.append(str(e.value))
    assert messages[0] == messages[1] and "bad.gpspec:3:" in messages[0]
