"""The fix rule, once for the live hooks (loop/) and for past sessions (history/): one
tracker, fed the session's moments in order, drafts what a person would keep of a failure.

A **fix** is a command that failed with a real error (shell/ reads it: through pipes, in
any client's shell tool; a cancelled call is none), then something changed, then the same
work passed. What changed is one of:

- a command run in between that did something (an install, a build of a dependency, a
  code generator, a migration): the fix was made by running it;
- the command itself: it passes with an environment variable, a flag or another
  program's path that it failed without;
- files edited.

**Not a lesson** (the task itself, not something a later session could meet again): a fix
made only by editing files this session had already been writing before the failure, or
whose error names one of them (a compile or test error in the code being written); a retry
that passed with nothing changed; a formatter's or linter's run.

The draft names the error (its real line, not a runner's summary), what changed (files,
and the change itself when short, or the command run) and the command that passes. Its
key is the failing work and the error's gist, so that one lesson is one draft however
many sessions meet it.

The tracker (tracker.py) keeps its state as plain JSON, which the hooks keep in a session's
state between processes; what a command is to the rule is commands.py's, and a fix's draft
lesson.py's.
"""

from agent_memory_client.drafting.tracker import CHANGE_CHARS, Tracker, error_query, relative_path

__all__ = ["CHANGE_CHARS", "Tracker", "error_query", "relative_path"]
