"""Synthetic data in the LongMemEval schema, at the shape of LongMemEval-S or -M, for timing the workflow only.

Why: the real LongMemEval-S file is 277 MB and -M larger; the scale benchmark needs the same shape (questions x
sessions per question x turn lengths, filler sessions recurring across haystacks) at any size, made the same way
every time. The text is drawn with a seeded RNG from a fixed vocabulary (Zipf-weighted common words plus a topic
per session, and a made-up name as the evidence), so BM25 and embeddings do real work; the figures it gives are
timings, never benchmark results (datasets built from it are named `synthetic-lme-*`).

Sharing: each question holds its answer sessions (its own) and `sessions - answers` filler sessions taken from a
pool of `ceil(questions * (sessions - min_answers) / reuse)` sessions. Question i (in a shuffled order) takes the
pool window that starts at floor(i * pool / questions), so every pool session is used and each recurs about
`reuse` times.
A recurring session takes the dates of the haystack it is in, so the parser (which keys sessions by date and
content) stores it once per haystack: the session-file growth issue 7 describes. Every `repeat_every`-th
question lists one of its fillers twice, at two dates, as 13 questions of the real LongMemEval-S file do.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

NOTICE = "synthetic LongMemEval-shaped data for timing membench; never report figures computed on it"

COMMON = """the of and to a in is it you that he was for on are with as his they be at one have this from or had by
word but what some we can out other were all there when up use your how said an each she which do their time if
will way about many then them write would like so these her long make thing see him two has look more day could go
come did number sound no most people my over know water than call first who may down side been now find any new
work part take get place made live where after back little only round man year came show every good me give our
under name very through just form sentence great think say help low line differ turn cause much mean before move
right boy old too same tell does set three want air well also play small end put home read hand port large spell add
even land here must big high such follow act why ask men change went light kind off need house picture try us again
animal point mother world near build self earth father head stand own page should country found answer school grow
study still learn plant cover food sun four between state keep eye never last let thought city tree cross farm hard
start might story saw far sea draw left late run while press close night real life few north open seem together next
white children begin got walk example ease paper group always music those both mark often letter until mile river car
feet care second book carry took science eat room friend began idea fish mountain stop once base hear horse cut sure
watch color face wood main enough plain girl usual young ready above ever red list though feel talk bird soon body
dog family direct pose leave song measure door product black short numeral class wind question happen complete ship
area half rock order fire south problem piece told knew pass since top whole king space heard best hour better true
during hundred five remember step early hold west ground interest reach fast verb sing listen six table travel less
morning ten simple several vowel toward war lay against pattern slow center love person money serve appear road map
rain rule govern pull cold notice voice unit power town fine certain fly fall lead cry dark machine note wait plan
figure star box noun field rest correct able pound done beauty drive stood contain front teach week final gave green
quick develop ocean warm free minute strong special mind behind clear tail produce fact street inch multiply nothing
course stay wheel full force blue object decide surface deep moon island foot system busy test record boat common
gold possible plane stead dry wonder laugh thousand ago ran check game shape equate hot miss brought heat snow tire
bring yes distant fill east paint language among""".split()

TOPICS = {
    "cooking": "recipe oven garlic simmer flour butter skillet roast basil dough sauce bake",
    "travel": "flight hotel passport itinerary luggage airport museum beach train visa tour booking",
    "finance": "mortgage budget savings loan interest credit invest tax pension account broker deposit",
    "fitness": "workout marathon gym protein stretch cardio squat yoga running weights coach sprint",
    "garden": "tomato soil compost seedling prune mulch greenhouse rose fertilizer harvest weed shovel",
    "music": "guitar concert chord piano album rehearsal violin melody band lyrics tempo drummer",
    "pets": "puppy kitten vet leash litter treat groomer aquarium parrot kennel collar adoption",
    "cars": "engine mileage tire dealership brake sedan battery insurance oil garage lease hybrid",
    "career": "interview manager promotion resume deadline meeting salary project client colleague office review",
    "health": "doctor allergy vitamin sleep clinic therapy dentist symptom prescription checkup migraine diet",
    "movies": "film director sequel trailer actor premiere streaming documentary cinema script genre oscar",
    "books": "novel author chapter library poetry memoir fiction publisher bookclub paperback series plot",
    "home": "kitchen renovation furniture carpet landlord roof plumber paint sofa closet apartment rent",
    "tech": "laptop software router backup keyboard update phone cloud password server app screen",
    "school": "course exam thesis professor semester homework lecture grade tuition seminar campus degree",
    "sports": "soccer tennis league tournament referee stadium golf basketball season score team ticket",
}
QUESTION_TYPES = ("single-session-user", "multi-session", "knowledge-update", "temporal-reasoning",
                  "single-session-preference", "single-session-assistant")
SYLLABLES = "ka lo mi ren dus vor tal bek sin ora pel zu nim har quo fen".split()


@dataclass(frozen=True)
class Shape:
    """The size and make-up of a generated file; `s()` and `m()` give the two upstream shapes."""

    questions: int = 500
    sessions: int = 50  # sessions per question (answer sessions included)
    turns: int = 10  # mean turns per session: an even count drawn from [turns-4, turns+4], at least 2
    user_words: int = 90  # mean words of a user turn (uniform in [w/2, 3w/2])
    assistant_words: int = 300  # mean words of an assistant turn
    reuse: float = 2.5  # how many haystacks a filler session is in, on average
    min_answers: int = 1  # answer sessions per question: uniform in [min_answers, max_answers]
    max_answers: int = 3
    abstention_every: int = 16  # every n-th question is an `_abs` one (0 = none)
    repeat_every: int = 38  # every n-th question lists one filler session twice (0 = none): 13 of 500, as the
    # cleaned LongMemEval-S file does (upstream issue #54)
    seed: int = 0

    @classmethod
    def s(cls, **changes: Any) -> "Shape":
        return cls(**changes)

    @classmethod
    def m(cls, **changes: Any) -> "Shape":
        return cls(**{"sessions": 500, **changes})

    def fillers(self) -> int:
        """The most filler sessions one question holds (it has at least `min_answers` answer sessions)."""
        return self.sessions - self.min_answers

    def pool_size(self) -> int:
        return max(self.fillers(), math.ceil(self.questions * self.fillers() / self.reuse))


class _Writer:
    """Seeded text: Zipf-weighted common words with a session topic mixed in."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.cum = list(_cumulative(len(COMMON)))

    def words(self, mean: int, topic: list[str]) -> str:
        n = self.rng.randint(max(1, mean // 2), max(1, mean * 3 // 2))
        common = self.rng.choices(COMMON, cum_weights=self.cum, k=n)
        for i in range(0, n, 4):  # a quarter of the words name the session's topic
            common[i] = self.rng.choice(topic)
        return " ".join(common)

    def name(self) -> str:
        return "".join(self.rng.choice(SYLLABLES) for _ in range(3)).capitalize()


def _cumulative(n: int):
    total = 0.0
    for rank in range(1, n + 1):
        total += 1.0 / rank
        yield total


def _session(writer: _Writer, shape: Shape, topic: list[str], evidence: str | None = None,
             flag_role: str = "user") -> list[dict[str, Any]]:
    """Alternating user/assistant turns; `evidence` goes into one turn of `flag_role`, flagged has_answer."""
    rng = writer.rng
    low = max(2, shape.turns - 4)
    count = 2 * rng.randint(low // 2, (shape.turns + 4) // 2)
    turns = [{"role": "user" if t % 2 == 0 else "assistant",
              "content": writer.words(shape.user_words if t % 2 == 0 else shape.assistant_words, topic)}
             for t in range(count)]
    if evidence is None:
        return turns
    for turn in turns:
        turn["has_answer"] = False
    spot = rng.randrange(1 if flag_role == "assistant" else 0, count, 2)
    turns[spot]["content"] = f"{turns[spot]['content']} {evidence}"
    turns[spot]["has_answer"] = flag_role != "none"
    return turns


def _list_again(haystack: list, fillers: list, rng: random.Random) -> None:
    """List one filler session a second time, at another place in the haystack (so at another date), the quirk
    of the real LongMemEval-S file. Its own RNG, so every other question stays as it was without repeats."""
    again = fillers[rng.randrange(len(fillers))]
    haystack.insert(rng.randrange(len(haystack) + 1), again)


def _date(moment: datetime) -> str:
    return moment.strftime("%Y/%m/%d (%a) %H:%M")


def generate(shape: Shape) -> list[dict[str, Any]]:
    """The questions of one file, in the upstream LongMemEval record layout."""
    if shape.sessions <= shape.max_answers or shape.min_answers < 1 or shape.min_answers > shape.max_answers:
        raise ValueError(f"need 1 <= min_answers <= max_answers < sessions, got {shape}")
    rng = random.Random(shape.seed)
    writer = _Writer(rng)
    topics = {name: words.split() for name, words in TOPICS.items()}
    names = sorted(topics)
    pool = [_session(writer, shape, topics[names[i % len(names)]]) for i in range(shape.pool_size())]
    windows = list(range(shape.questions))
    rng.shuffle(windows)
    records = []
    for i in range(shape.questions):
        records.append(_question(i, windows[i], shape, rng, writer, topics, names, pool))
    return records


def _question(i: int, window: int, shape: Shape, rng: random.Random, writer: _Writer,
              topics: dict[str, list[str]], names: list[str], pool: list) -> dict[str, Any]:
    qid = f"{rng.getrandbits(32):08x}"
    abstain = shape.abstention_every > 0 and i % shape.abstention_every == shape.abstention_every - 1
    qtype = QUESTION_TYPES[i % len(QUESTION_TYPES)]
    topic = names[rng.randrange(len(names))]
    thing, place = rng.sample(topics[topic], 2)
    answer = writer.name()
    evidence = f"by the way my {thing} from the {place} is called {answer}"
    flag_role = "none" if abstain else ("assistant" if qtype == "single-session-assistant" else "user")
    n_answers = rng.randint(shape.min_answers, shape.max_answers)
    answers = [(f"answer_{qid}_{k + 1}", _session(writer, shape, topics[topic], evidence, flag_role))
               for k in range(n_answers)]
    start = window * shape.pool_size() // shape.questions
    fill = shape.sessions - n_answers
    fillers = [(f"synth_{(start + j) % len(pool):06d}", pool[(start + j) % len(pool)]) for j in range(fill)]
    haystack = fillers + answers
    rng.shuffle(haystack)
    if shape.repeat_every > 0 and i % shape.repeat_every == shape.repeat_every - 1:
        _list_again(haystack, fillers, random.Random(f"{shape.seed}-repeat-{i}"))
    end = datetime(2023, 1, 1) + timedelta(minutes=rng.randrange(365 * 24 * 60))
    step = timedelta(minutes=rng.randint(30, 3 * 24 * 60))
    dates = [_date(end - step * (len(haystack) - p)) for p in range(len(haystack))]
    return {
        "question_id": f"{qid}_abs" if abstain else qid,
        "question_type": qtype,
        "question": f"what is the name of my {thing} from the {place}?",
        "answer": "You did not mention this information." if abstain else answer,
        "question_date": _date(end),
        "haystack_session_ids": [sid for sid, _ in haystack],
        "haystack_dates": dates,
        "haystack_sessions": [turns for _, turns in haystack],
        "answer_session_ids": [sid for sid, _ in answers],
    }


def write(shape: Shape, path: Path) -> dict[str, Any]:
    """Write the file and, beside it, `<name>.about.txt` saying what it is; returns the shape and counts."""
    records = generate(shape)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{path.name}")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(records, fh)
    tmp.replace(path)
    about = {"notice": NOTICE, "shape": asdict(shape), "counts": counts(records)}
    path.with_name(f"{path.stem}.about.txt").write_text(json.dumps(about, indent=2) + "\n", encoding="utf-8")
    return about


def counts(records: list[dict[str, Any]]) -> dict[str, int]:
    """Questions, session slots, distinct session ids and turns in distinct sessions of a generated file."""
    distinct: dict[str, int] = {}
    repeated = 0
    for record in records:
        repeated += len(set(record["haystack_session_ids"])) < len(record["haystack_session_ids"])
        for sid, turns in zip(record["haystack_session_ids"], record["haystack_sessions"]):
            distinct[sid] = len(turns)
    return {"questions": len(records), "abstention_questions": sum(r["question_id"].endswith("_abs") for r in records),
            "session_slots": sum(len(r["haystack_session_ids"]) for r in records),
            "distinct_sessions": len(distinct), "turns_in_distinct_sessions": sum(distinct.values()),
            "questions_with_repeated_sessions": repeated}
