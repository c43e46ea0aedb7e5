"""NLTK's own PorterStemmer, loaded without running `nltk/__init__.py`.

LoCoMo's token F1 stems with `nltk.stem.PorterStemmer`, whose module needs only `re` and two tiny NLTK helpers. The
`nltk` package's `__init__`, though, imports most of NLTK, and with it scipy.stats and scikit-learn where they are
installed (sentence-transformers brings both): 2.8 s of every LoCoMo QA job's start-up, for nothing it uses. Here
the stemmer's modules are found through stand-in `nltk` and `nltk.stem` packages that carry only a search path, so
it is the same code, from the same installed NLTK, producing the same stems (tests/test_locomo_porter.py). The stand-
ins leave `sys.modules` as soon as the module is loaded, so a later `import nltk` anywhere gets the whole package."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from pathlib import Path

__all__ = ["porter_stemmer"]

_LOCK = threading.Lock()
_PACKAGES = ("nltk", "nltk.stem")


def _porter_module() -> types.ModuleType:
    spec = importlib.util.find_spec("nltk")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("LoCoMo's token F1 stems with NLTK's PorterStemmer: pip install nltk")
    root = Path(list(spec.submodule_search_locations)[0])
    before = set(sys.modules)
    for name, folder in zip(_PACKAGES, (root, root / "stem")):
        package = types.ModuleType(name)
        package.__path__ = [str(folder)]
        sys.modules[name] = package
    try:
        return importlib.import_module("nltk.stem.porter")
    finally:
        for name in set(sys.modules) - before:
            if name == "nltk" or name.startswith("nltk."):
                del sys.modules[name]


def porter_stemmer():
    """A new `nltk.stem.porter.PorterStemmer` (NLTK's default mode, as LoCoMo's evaluation builds it)."""
    with _LOCK:
        if "nltk" in sys.modules:  # the whole package is loaded already: nothing to save
            from nltk.stem.porter import PorterStemmer
        else:
            PorterStemmer = _porter_module().PorterStemmer
    return PorterStemmer()
