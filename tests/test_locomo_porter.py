"""LoCoMo's token F1 stems with NLTK's own PorterStemmer, loaded without NLTK's package `__init__`
(membench.benchmarks.locomo.porter): the same stems as `nltk.stem.PorterStemmer` on every word of the real LoCoMo
file, and a job that scores F1 imports neither the rest of NLTK nor scipy nor scikit-learn. Each check runs in a
fresh interpreter, where nothing has imported nltk yet (in this one, another test may have)."""

from __future__ import annotations

from conftest import fresh_python

SAME_STEMS = r"""
import json, re, sys
from membench.benchmarks.locomo.porter import porter_stemmer
light = porter_stemmer()
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("nltk", "scipy", "sklearn"))
words = sorted(set(re.findall(r"[a-z]+", open(sys.argv[1], encoding="utf-8").read().lower())))
from nltk.stem import PorterStemmer
whole = PorterStemmer()
differ = [w for w in words if light.stem(w) != whole.stem(w)]
changed = sum(light.stem(w) != w for w in words)
print(json.dumps({"loaded": loaded, "words": len(words), "changed": changed, "differ": differ[:20],
                  "same_class": type(light) is type(whole), "mode": light.mode}))
"""

F1_ALONE = r"""
import json, sys
from membench.benchmarks.locomo.answer_f1 import f1_score
value = f1_score("She was running with the dogs", "ran with dogs")
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("nltk", "scipy", "sklearn"))
print(json.dumps({"f1": value, "loaded": loaded}))
"""


def test_the_light_stemmer_stems_every_locomo_word_as_nltk_does(locomo_dir):
    out = fresh_python(SAME_STEMS, str(locomo_dir / "locomo10.json"))
    assert out["loaded"] == []  # the stemmer alone left nothing of nltk, scipy or sklearn behind
    assert out["words"] > 10_000 and out["changed"] > 3_000  # a real vocabulary, much of it stemmed
    assert out["differ"] == [] and out["mode"] == "NLTK_EXTENSIONS"
    assert not out["same_class"]  # two loads of the same file: the light one did not reuse the package's


def test_f1_imports_no_scipy_sklearn_or_the_rest_of_nltk():
    out = fresh_python(F1_ALONE)
    # stems: she, wa, run, with, dog | ran, with, dog -> common {with, dog}: P 2/5, R 2/3, F1 = 2PR/(P+R) = 0.5
    assert out["f1"] == 0.5
    assert out["loaded"] == []
