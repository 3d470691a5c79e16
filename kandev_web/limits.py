"""How much text an operator may send, in one place, each limit with the reason for its value.

Every operator-supplied text has a limit here, and each is refused *before*
anything is recorded or sent: a text the agent cannot receive must not be
shown on the board as if it had been. The values are consistent with the
channels the text travels through:

- the agent stream carries one request per WebSocket frame of at most
  ``MAX_FRAME_BYTES`` (1 MiB, ``docs/agent-stream.md#frame-size``), and a
  character costs at most ``JSON_BYTES_PER_CHAR`` bytes there once encoded;
- the MCP client reads the ``ask_user_question_kandev`` result as one
  server-sent event, which the bridge's client also refuses over 1 MiB.

Lengths count characters (Python ``str``), as Django's ``max_length`` does,
and are judged on the text as sent (typed answers and reasons trimmed, as they
are stored). No Django here: agentctl's own limits are read from agentctl.
"""

from kandev_web.agentctl.elicitation.answers import MAX_TEXT_CHARS as _AGENTCTL_TEXT_CHARS

#: The most bytes one character can take in compact JSON without ASCII escaping:
#: a control character becomes ``\u00XX`` (6 bytes); anything else is at most 4
#: bytes of UTF-8, and a lone surrogate ``\udXXX`` is 6 as well.
JSON_BYTES_PER_CHAR = 6

#: What the operator tells the agent to do (Start agent, a follow-up). It goes
#: to agentctl in one ``agent.prompt`` frame: 100,000 characters are at most
#: 600,000 bytes, which leaves the rest of the 1 MiB frame for the envelope.
#: About 25,000 words, far more than any prompt typed; a bigger document
#: belongs in the agent's working directory, where it can read it.
PROMPT_CHARS = 100_000

#: A task's title: shown on its card and in lists, and the default prompt when
#: the task has no description. The database column's width.
TASK_TITLE_CHARS = 300

#: A task's description, the default prompt of Start agent: no longer than a
#: prompt, so the default always goes through as it is.
TASK_DESCRIPTION_CHARS = PROMPT_CHARS

#: Typed text answering one ``ask_user_question_kandev`` question: Kandev's own
#: limit, kept verbatim with its message (``docs/decisions/answers.md#f3-validation-on-the-two-paths``).
ASK_ANSWER_CHARS = 2_000

#: Typed text answering one elicitation question: agentctl judges it
#: (``docs/decisions/answers.md#f10-answer-validation``); the overlay only says the same.
ELICITATION_ANSWER_CHARS = _AGENTCTL_TEXT_CHARS

#: Why the operator skipped a question bundle. It goes verbatim into the
#: ``ask_user_question_kandev`` result beside up to four typed answers, so it is
#: given the same room as one of them; unbounded, a 0.5 MB reason once made the
#: result outgrow the MCP client's 1 MiB event and the agent got only an error.
SKIP_REASON_CHARS = ASK_ANSWER_CHARS

#: The largest result ``ask_user_question_kandev`` can return: four answers and a reason.
ASK_RESULT_CHARS = 4 * ASK_ANSWER_CHARS + SKIP_REASON_CHARS

#: An agent profile's command, as typed: one line of shell words. Commands are
#: a few hundred characters; the limit only keeps a paste from becoming a row.
PROFILE_COMMAND_CHARS = 4_000

#: An agent profile's environment, as typed: ``NAME=value`` lines, API keys
#: among them. Room for dozens of variables.
PROFILE_ENVIRONMENT_CHARS = 20_000

#: A secret's value in an agent profile (an API key, a token, a PEM key). API
#: keys are a few hundred characters at most and a PEM private key about
#: 3,300; 16,384 leaves room for any of them while staying far below the
#: kernel's 128 KiB per environment string and the executor's 1 MiB frame,
#: which carries every variable of a launch at once.
SECRET_VALUE_CHARS = 16_384

#: A secret's name: an environment variable's, shown in the admin.
SECRET_NAME_CHARS = 200
