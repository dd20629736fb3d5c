"""Executable semantics: the IR compiled to Python successor functions over flat slot tuples."""

from gpmodel.layout import Layout
from gpmodel.model import CompiledModel, Instance, State, compile_model, truth
from gpmodel.runtime import ModelError

__all__ = ["CompiledModel", "Instance", "Layout", "ModelError", "State", "compile_model", "truth"]
