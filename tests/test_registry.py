"""The one generic registry behind formats, policies and methods."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pytest

from core.registry import Registry


@dataclass(frozen=True)
class Entry:
    name: str
    order: int = 0
    tag: str = ""


def _no_tag_twice(spec: Entry, others: Mapping[str, Entry]) -> None:
    if spec.tag and any(o.tag == spec.tag for o in others.values()):
        raise ValueError(f"tag {spec.tag} is taken")


def test_entries_keep_their_order_and_a_second_name_is_refused():
    reg: Registry[Entry] = Registry("toy", check=_no_tag_twice)
    reg.register_all([Entry("b", 2), Entry("a", 1, "x")])
    assert list(reg) == ["b", "a"] and len(reg) == 2 and reg["a"].order == 1
    assert [e.name for e in reg.ordered(lambda e: e.order)] == ["a", "b"]
    with pytest.raises(ValueError, match="toy 'a' is already registered"):
        reg.register(Entry("a", 5))
    with pytest.raises(ValueError, match="tag x is taken"):
        reg.register(Entry("c", tag="x"))
    assert "c" not in reg  # a refused entry is not half-added
    reg.register(Entry("a", 9, "x"), replace=True)  # its own tag does not clash with itself
    assert reg["a"].order == 9 and list(reg) == ["b", "a"]


def test_a_registered_block_cleans_up_even_when_it_fails():
    reg: Registry[Entry] = Registry("toy")
    with pytest.raises(RuntimeError), reg.registered(Entry("t")):
        assert "t" in reg
        raise RuntimeError
    assert "t" not in reg and reg.get("t") is None
    reg.unregister("never there")  # removing an absent name is a no-op


def test_every_stage_registry_is_one_of_these_with_its_builtins():
    from core.chunk import policy_registry as policies
    from core.formats import format_registry as formats
    from core.methods import method_registry as methods

    for module, builtins in (
        (formats, {"pdf", "text", "markdown"}),
        (policies, {"fixed", "sentence", "structure"}),
        (methods, {"naive", "late", "bm25"}),
    ):
        table = next(v for v in vars(module).values() if isinstance(v, Registry))
        assert builtins <= set(table), module.__name__
