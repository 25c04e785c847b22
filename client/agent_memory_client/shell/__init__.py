"""A shell command and its output as the shell saw them, once for every client: which
command it was (through pipes, redirects, `cd` and environment prefixes: command.py, its
here-documents left out: here_documents.py), whether it failed (an exit status in the
text, a failure a pipe into `tail` hid, a call the client cancelled) and which of its lines
is the real error, not a runner's summary (output.py).

The live hooks (clients/) and the history import (history/) read every shell result
through these names, and drafting's rule works on what they say.
"""

from agent_memory_client.shell.command import (
    FILTERS,
    PLUMBING,
    commands,
    environment,
    key_of,
    keys,
    program_name,
    same_work,
    segments,
    short,
    shown,
    unwrapped,
    work,
)
from agent_memory_client.shell.output import (
    cancelled,
    error_lines,
    exit_code_in,
    failed,
    failed_output,
    is_filtered,
    kept,
    last_lines,
    plain,
    swallows_status,
)

__all__ = [
    "FILTERS",
    "PLUMBING",
    "cancelled",
    "commands",
    "environment",
    "error_lines",
    "exit_code_in",
    "failed",
    "failed_output",
    "is_filtered",
    "kept",
    "key_of",
    "keys",
    "last_lines",
    "plain",
    "program_name",
    "same_work",
    "segments",
    "short",
    "shown",
    "swallows_status",
    "unwrapped",
    "work",
]
