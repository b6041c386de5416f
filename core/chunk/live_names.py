"""Names of live policies: a splitter of the user's own, named ``KIND:TARGET`` with its
parameters, run on the canonical text each time a document is chunked.

``KIND`` is one of the kinds a resolver is registered for (``langchain``, ``llamaindex``,
``chonkie``, ``py``: ``core.imported.live``), ``TARGET`` the splitter's class (or, for
``py``, ``package.module:factory``). Parameters are keyword arguments passed to the
splitter, written as a call: ``langchain:RecursiveCharacterTextSplitter(keep_separator=False)``
(values are Python literals; a bare word is a string). ``per_page`` is Chunkscope's own:
``per_page=True`` runs the splitter page by page, as a per-page loader feeds it.

The canonical name sorts the parameters and writes each value with ``repr``, so one
splitter with one set of parameters has one name, one key and one set of chunk ids.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import cast

from core.chunk.policy_spec import PolicyError

PER_PAGE = "per_page"
_KIND = re.compile(r"^([a-z][a-z0-9_]*):(.+)$", re.S)
_TARGET = re.compile(r"^[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?$")


@dataclass(frozen=True, slots=True)
class LiveName:
    """A parsed live name: ``kind``, ``target`` and the parameters, sorted by key."""

    kind: str
    target: str
    params: tuple[tuple[str, object], ...] = ()

    @property
    def name(self) -> str:
        """The canonical name (see the module doc)."""
        if not self.params:
            return f"{self.kind}:{self.target}"
        args = ", ".join(f"{k}={v!r}" for k, v in self.params)
        return f"{self.kind}:{self.target}({args})"

    @property
    def per_page(self) -> bool:
        return bool(dict(self.params).get(PER_PAGE, False))

    def splitter_params(self) -> dict[str, object]:
        """The parameters the splitter itself takes (``per_page`` is Chunkscope's)."""
        return {k: v for k, v in self.params if k != PER_PAGE}

    def with_params(self, extra: dict[str, object]) -> LiveName:
        """This name with ``extra`` parameters added (replacing any of the same key)."""
        merged = dict(self.params) | extra
        return LiveName(self.kind, self.target, tuple(sorted(merged.items())))


def is_live(name: str) -> bool:
    """Whether ``name`` has the ``KIND:`` form of a live policy."""
    return _KIND.match(name) is not None


def parse_value(text: str) -> object:
    """A parameter value: a Python literal (``3``, ``True``, ``'x'``, ``['a', 'b']``),
    else the text itself as a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_param(item: str) -> tuple[str, object]:
    """``KEY=VALUE`` (from ``--param``) as a pair; ``PolicyError`` for another shape."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip().isidentifier():
        raise PolicyError(f"--param takes KEY=VALUE, got {item!r}")
    return key.strip(), parse_value(value.strip())


def parse_live_name(name: str) -> LiveName:
    """``KIND:TARGET`` or ``KIND:TARGET(key=value, ...)`` parsed; ``PolicyError`` (one
    line) for a name of another shape."""
    match = _KIND.match(name.strip())
    if match is None:
        raise PolicyError(f"a live policy is named KIND:TARGET, got {name!r}")
    kind, rest = match.group(1), match.group(2).strip()
    target, params = rest, cast(tuple[tuple[str, object], ...], ())
    if rest.endswith(")") and "(" in rest:
        target, _, args = rest.partition("(")
        params = _call_params(name, args[:-1])
    target = target.strip()
    if not _TARGET.match(target):
        raise PolicyError(f"{name!r}: {target!r} is not a class or module:function name")
    return LiveName(kind, target, tuple(sorted(params)))


def _call_params(name: str, args: str) -> tuple[tuple[str, object], ...]:
    try:
        call = ast.parse(f"f({args})", mode="eval").body
    except SyntaxError:
        raise PolicyError(f"{name!r}: the parameters are not key=value, key=value") from None
    if not isinstance(call, ast.Call) or call.args:
        raise PolicyError(f"{name!r}: the parameters are not key=value, key=value")
    params = []
    for keyword in call.keywords:
        if keyword.arg is None:
            raise PolicyError(f"{name!r}: the parameters are not key=value, key=value")
        node = keyword.value
        if isinstance(node, ast.Name):
            value: object = node.id  # a bare word is a string
        else:
            try:
                value = ast.literal_eval(node)
            except ValueError:
                raise PolicyError(
                    f"{name!r}: the value of {keyword.arg} is not a literal"
                ) from None
        params.append((keyword.arg, value))
    return tuple(params)


def split_names(text: str) -> list[str]:
    """A comma list of policy names, a live name's parameters kept whole:
    ``"structure,py:m:f(a=1, b=2)"`` -> ``["structure", "py:m:f(a=1, b=2)"]``."""
    names: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if ch == "," and depth <= 0:
            names.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    names.append("".join(current).strip())
    found = [n for n in names if n]
    if not found:
        raise PolicyError("give at least one value for --policy")
    return found
