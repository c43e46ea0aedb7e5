"""The judge's rubrics every benchmark shares: the generic rule and the rule for a question with no answer in the
history. A benchmark adds rubrics for its own question types in its folder (`Qa.rubrics`)."""

GENERIC = ("The response is correct if it contains the correct answer (GOLD), is equivalent to it, or gives "
           "all the intermediate steps needed to reach it. If it contains only part of the information GOLD "
           "requires, or contradicts GOLD, it is not correct.")
UNANSWERABLE = ("This question cannot be answered from the conversation history; GOLD explains why. The "
                "response is correct only if it identifies the question as unanswerable, for example by "
                "saying that the information is incomplete or not mentioned, or that related information is "
                "given but not what was asked.")
