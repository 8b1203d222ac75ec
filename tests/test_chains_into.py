"""A rule that chains may name the rules its fixes make work for (Rule.chains_into): the
round after its fixes runs those and the rules that acted, not every rule, and converts as
the round of every rule does."""

from __future__ import annotations

from pathlib import Path

import pytest

from repo_sources import cuda_sources

from migrator import apitables, engine, registry
from migrator.convert import convert_bytes, rules_for
from migrator.rule import Rule
from migrator.settings import Settings
from migrator.source import Source

ROOT = Path(__file__).resolve().parent.parent

GRADIENTS = (ROOT / "kernels" / "gradient_transfer.cu").read_bytes()


def test_every_chained_code_names_a_rule():
    codes = {code for cls in registry.all_rules() for code in cls.codes()}
    for cls in registry.all_rules():
        assert set(cls.chains_into) <= codes, cls.__name__
        assert not cls.chains_into or cls.chains, cls.__name__  # only a rule that chains


def _rounds_rules(data: bytes, monkeypatch) -> list[list[str]]:
    """The codes of the rules each round of converting ``data`` ran."""
    ran: list[list[str]] = []
    real = engine._run_rules

    def recording(rules, ctx):
        ran.append([rule.code for rule in rules])
        return real(rules, ctx)

    monkeypatch.setattr(engine, "_run_rules", recording)
    settings = Settings()
    engine.fix_source(Source("g.cu", data), [cls() for cls in rules_for(settings)], settings,
                      apitables.load())
    return ran


def test_the_round_after_a_pinned_buffer_runs_the_rules_it_feeds(monkeypatch):
    """XFR001 pins the host buffer of gradient_transfer.cu's copy loop; the next round makes
    those copies async (XFR003) and renames the allocator it wrote (ARG001, API001)."""
    ran = _rounds_rules(GRADIENTS, monkeypatch)
    everything = len(rules_for(Settings()))
    assert len(ran) == 2 and len(ran[0]) == everything
    assert {"API001", "ARG001", "XFR003"} <= set(ran[1]) and len(ran[1]) < everything / 3
    result = convert_bytes("g.cu", GRADIENTS, Settings())
    assert b"hipMemcpyAsync" in result.output and b"hipHostMalloc(" in result.output


@pytest.mark.parametrize("settings", [Settings(), Settings(rocm=(5, 2, 0))],
                         ids=["rocm6.4", "rocm5.2"])
def test_the_rules_named_and_every_rule_agree_on_kernels_and_fixtures(monkeypatch, settings):
    paths = cuda_sources()
    named = [convert_bytes(path.name, path.read_bytes(), settings) for path in paths]
    monkeypatch.setattr(Rule, "chains_into", ())
    for cls in registry.all_rules():
        monkeypatch.setattr(cls, "chains_into", ())  # every chaining rule feeds every rule
    key = lambda f: (f.line, f.column, f.code, f.message, f.fixed)  # noqa: E731
    for path, first in zip(paths, named):
        every = convert_bytes(path.name, path.read_bytes(), settings)
        assert (first.status, first.output) == (every.status, every.output), path
        assert list(map(key, first.findings)) == list(map(key, every.findings)), path
