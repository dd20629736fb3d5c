"""Executable semantics: the IR compiled to Python successor functions over flat slot tuples."""

from gpcheck.gpmodel.layout import Layout
from gpcheck.gpmodel.model import CompiledModel, Instance, State, compile_model, truth
from gpcheck.gpmodel.runtime import ModelError

__all__ = ["CompiledModel", "Instance", "Layout", "ModelError", "State", "compile_model", "truth"]
