"""python/cnsim/_core.pyi describes cnsim._core: the same names, parameters and kinds of thing."""

from __future__ import annotations

import ast
import builtins
import inspect
from pathlib import Path

import pytest

import cnsim
from cnsim import _core

PACKAGE = Path(cnsim.__file__).parent
STUB = ast.parse((PACKAGE / "_core.pyi").read_text(encoding="utf-8"))
#: The module's dunder names that are part of its interface.
PUBLIC_DUNDERS = {"__version__"}


def stub_names(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """The names a stub body (module or class) declares, with their statements."""
    names: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            names.update((t.id, node) for t in node.targets if isinstance(t, ast.Name))
    return names


def public(names) -> set[str]:
    return {n for n in names if not n.startswith("_") or n in PUBLIC_DUNDERS}


STUB_NAMES = stub_names(STUB.body)
FUNCTIONS = [name for name, node in STUB_NAMES.items() if isinstance(node, ast.FunctionDef)]
CLASSES = [name for name, node in STUB_NAMES.items() if isinstance(node, ast.ClassDef)]


def test_py_typed_marker_is_shipped_with_the_stub():
    assert (PACKAGE / "py.typed").is_file()


def test_stub_and_module_name_the_same_things():
    assert public(STUB_NAMES) == public(dir(_core)) == set(_core.__all__)


def stub_parameters(node: ast.FunctionDef) -> list[tuple[str, object]]:
    """(name, default) of each parameter; the default ``...`` when the stub leaves it open, or no default."""
    args = node.args
    positional = args.posonlyargs + args.args
    defaults = [inspect.Parameter.empty] * (len(positional) - len(args.defaults)) + [
        ... if isinstance(d, ast.Constant) and d.value is ... else ast.literal_eval(d) for d in args.defaults
    ]
    params = list(zip((a.arg for a in positional), defaults))
    params += [
        (a.arg, inspect.Parameter.empty if d is None else ast.literal_eval(d))
        for a, d in zip(args.kwonlyargs, args.kw_defaults)
    ]
    return params


def module_parameters(obj) -> list[tuple[str, object]]:
    return [(p.name, p.default) for p in inspect.signature(obj).parameters.values()]


def same_parameters(stub: list[tuple[str, object]], module: list[tuple[str, object]]) -> bool:
    """Same names in the same order; defaults equal where the stub spells one out."""
    if [n for n, _ in stub] != [n for n, _ in module]:
        return False
    for (_, s), (_, m) in zip(stub, module):
        if (s is inspect.Parameter.empty) != (m is inspect.Parameter.empty):
            return False
        if s is not ... and s is not inspect.Parameter.empty and s != m:
            return False
    return True


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_parameters_match(name):
    assert same_parameters(stub_parameters(STUB_NAMES[name]), module_parameters(getattr(_core, name)))


@pytest.mark.parametrize("name", CLASSES)
def test_class_matches(name):
    node = STUB_NAMES[name]
    cls = getattr(_core, name)
    assert isinstance(cls, type)
    for base in node.bases:
        assert issubclass(cls, getattr(builtins, ast.unparse(base))), f"{name}: {ast.unparse(base)}"
    members = stub_names(node.body)
    assert public(members) == public(vars(cls)), name
    for member, member_node in members.items():
        if not isinstance(member_node, ast.FunctionDef):
            continue
        properties = {ast.unparse(d) for d in member_node.decorator_list} & {"property"}
        if member == "__new__":
            # The constructor: its parameters after cls are the class's signature.
            assert same_parameters(stub_parameters(member_node)[1:], module_parameters(cls)), name
        elif properties:
            assert inspect.isdatadescriptor(inspect.getattr_static(cls, member)), f"{name}.{member}"
        else:
            method = getattr(cls, member)
            assert callable(method), f"{name}.{member}"
            assert same_parameters(stub_parameters(member_node), module_parameters(method)), f"{name}.{member}"
