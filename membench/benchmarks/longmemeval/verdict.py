"""LongMemEval's judge rubrics by question type, restated from upstream's ``src/evaluation/evaluate_qa.py``
(``get_anscheck_prompt``) in this project's words; other types take the generic rule (`membench.benchmarks.rubrics`)."""

from membench.benchmarks.rubrics import GENERIC

RUBRICS = {
    "temporal-reasoning": GENERIC + " Do not penalise off-by-one errors in a number of days, weeks, months "
                                    "or years (for example 19 days when GOLD says 18).",
    "knowledge-update": ("The response is correct if it gives the updated answer in GOLD; it may also mention "
                         "earlier information, as long as the updated answer is the one it gives."),
    "single-session-preference": ("GOLD is a rubric describing the desired personalised response. The response "
                                  "is correct if it recalls and uses the user's personal information correctly; "
                                  "it does not need to cover every point of the rubric."),
}
