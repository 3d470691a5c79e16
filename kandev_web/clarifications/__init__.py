"""Questions an agent asks an operator, from either path (an ask_user_question_kandev bundle, an ACP
elicitation), until they are settled.

A question is settled in one place, ``actions``: each way it can end has
exactly one writer, named there.
"""
