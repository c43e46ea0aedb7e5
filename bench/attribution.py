"""Attribution's precision and recall on LoCoMo's observations (membench.memory.attribution_quality).

    python bench/attribution.py ../shared/data/locomo/locomo10.json [--conversations conv-26 conv-30]
        [--threshold 0.5 --cosine-weight 0.5 --gain 0.2 --max-turns 3 --candidates 6]

Prints one JSON line per conversation and one for all, with the seconds it took (embeddings from the cache in
$MEMBENCH_EMBEDDING_CACHE, or in memory).
"""

import argparse
import json
import time

from membench.embedding.cache import shared_cache
from membench.memory.attribution import Attribution
from membench.memory.attribution_quality import locomo_observation_cases, measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("locomo_json")
    parser.add_argument("--conversations", nargs="*")
    defaults = Attribution()
    parser.add_argument("--threshold", type=float, default=defaults.threshold)
    parser.add_argument("--cosine-weight", type=float, default=defaults.cosine_weight)
    parser.add_argument("--gain", type=float, default=defaults.gain)
    parser.add_argument("--max-turns", type=int, default=defaults.max_turns)
    parser.add_argument("--candidates", type=int, default=defaults.candidates)
    args = parser.parse_args()
    rule = Attribution(args.threshold, args.cosine_weight, args.gain, args.max_turns, args.candidates)
    cases = locomo_observation_cases(args.locomo_json, args.conversations)
    cache = shared_cache(None)
    began = time.perf_counter()
    for conversation in dict.fromkeys(c.conversation for c in cases):
        part = [c for c in cases if c.conversation == conversation]
        print(json.dumps({"conversation": conversation, **measure(part, cache, rule)}), flush=True)
    print(json.dumps({"conversation": "all", "rule": vars(rule), **measure(cases, cache, rule),
                      "seconds": round(time.perf_counter() - began, 1)}))


if __name__ == "__main__":
    main()
