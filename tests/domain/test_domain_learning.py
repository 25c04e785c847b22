"""Pure rules: task patterns, successful steps, categories, titles, retry diffs."""

from __future__ import annotations

import pytest

from app.domain.diffs import NO_CHANGES, line_diff, retry_context
from app.domain.inputs.retry import FileState, RetryRequest
from app.domain.learning import infer_category, make_title
from app.domain.tasks import detect_task_pattern, extract_successful_steps, strategy_content


@pytest.mark.parametrize(
    ("description", "pattern"),
    [
        ("Lag en ny SQL-migrasjon for users-tabellen", "database migration"),
        ("Legg til et nytt API-endpoint for brukerregistrering", "new api endpoint"),
        ("Fiks TypeScript-feilen i auth.ts", "fix bug"),
        ("Refaktorer agent.ts til mindre moduler", "refactoring"),
        ("Implementer OWASP security headers", "security improvement"),
        ("FIX the BUG in Auth", "fix bug"),
        ("ALTER TABLE users add a column", "database migration"),
        ("Write tests for the parser", "add tests"),
        ("Build the settings page component", "frontend change"),
        ("Install and configure the linter", "configuration"),
        ("Update the README", "documentation"),
        ("Speed up the search with a cache", "performance optimization"),
        ("Extract the pricing module", "refactoring"),
    ],
)
def test_detect_task_pattern(description: str, pattern: str) -> None:
    assert detect_task_pattern(description) == pattern


def test_keywords_match_only_at_the_start_of_words() -> None:
    # "latest" holds "test", "docker" holds "doc", "rapid" holds "api": none of them count.
    assert detect_task_pattern("Bump the latest docker image") == "bump latest docker"
    assert detect_task_pattern("rapid prototyping") == "rapid prototyping"
    assert detect_task_pattern("go on") == "general task"


def test_extract_successful_steps_drops_failed_indexes_and_blank_lines() -> None:
    plan = "1. Write the migration\n\n2. Run it\n3. Update the model\n"
    history = [
        {"step_index": 0, "result": "success"},
        {"step_index": 1, "result": "failure", "error": "boom"},
        {"step_index": 2, "result": "success"},
    ]
    assert extract_successful_steps(history, plan) == [
        "1. Write the migration",
        "3. Update the model",
    ]
    assert strategy_content("database migration", ["1. Write it", "2) Run it"], 1000) == (
        'Strategy for "database migration": Write it → Run it'
    )


def test_a_strategy_longer_than_a_memory_keeps_the_whole_steps_that_fit() -> None:
    steps = ["1. " + "a" * 30, "2. " + "b" * 30, "3. " + "c" * 30]
    content = strategy_content("x", steps, 100)
    assert content == 'Strategy for "x": ' + "a" * 30 + " → " + "b" * 30
    assert strategy_content("x", ["z" * 500], 100) == 'Strategy for "x": ' + "z" * 82


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Never call the billing API without an idempotency key", "anti-patterns"),
        ("Don't reuse the session across tenants", "anti-patterns"),
        ("The flaky test was a bug caused by a shared tmp dir", "anti-patterns"),
        ("Always run migrations in a transaction", "patterns"),
        ("Prefer httpx over requests in async code", "patterns"),
        ("It is best practice to pin the base image", "patterns"),
        ("The staging database is slower on Mondays", "heuristics"),
        ("Because users complain, the page is cached", "heuristics"),
    ],
)
def test_infer_category(text: str, category: str) -> None:
    assert infer_category(text) == category


def test_title_is_cut_at_sixty_characters() -> None:
    assert make_title("Short learning title") == "Short learning title"
    long = "x" * 80
    assert make_title(long) == "x" * 57 + "..."
    assert len(make_title(long)) == 60


def test_inserted_line_at_the_top_is_one_added_line() -> None:
    before = "\n".join(f"line {i}" for i in range(30))
    after = "import os\n" + before
    assert line_diff(before, after) == "+ import os"


def test_diff_marks_added_deleted_and_changed_lines_and_is_bounded() -> None:
    assert line_diff("a\nb\nc", "a\nB\nc") == "~ B"
    assert line_diff("a\nb\nc", "a\nc") == "- b"
    assert line_diff("a\n", "a") == NO_CHANGES
    big = line_diff("", "\n".join(f"new line {i}" for i in range(100)))
    assert big.count("\n") <= 20 and len(big) <= 500


def test_retry_context_rules() -> None:
    context = retry_context(
        RetryRequest(
            task_description="t" * 300,
            plan_summary="1. do it",
            current_files=[
                FileState("new.py", "n" * 800),
                FileState("same.py", "unchanged"),
                FileState("edit.py", "a\nB\nc"),
            ],
            previous_files=[FileState("same.py", "unchanged"), FileState("edit.py", "a\nb\nc")],
            validation_output="E" * 5000,
            diagnosis={"root_cause": "typo", "reason": "r", "suggested_action": "fix"},
            attempt_number=2,
            full_context_tokens=10_000,
        )
    )
    assert len(context["task_summary"]) == 200
    assert len(context["latest_error"]) == 1000
    files = {f["path"]: f["diff"] for f in context["changed_files"]}
    assert set(files) == {"new.py", "edit.py"}
    assert files["new.py"] == "[NEW FILE]\n" + "n" * 500
    assert files["edit.py"] == "~ B"
    assert context["attempt_number"] == 2
    assert context["saved_tokens"] == 10_000 - context["estimated_tokens"]
    assert context["saved_percent"] == round(100 * context["saved_tokens"] / 10_000, 1)
