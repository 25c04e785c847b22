"""Memories tidy proposes to change: two that say the same thing (a merge), five that do
(more than any one memory's nearest), two that may say the opposite (a replacement)."""

SAME = [
    "Upload tests must each use their own tmp_path: a shared temp dir makes them fail",
    "Upload tests must each use their own tmp_path; a shared temp dir makes them fail",
]
OPPOSED = [
    "Deploys go out on Tuesdays after the release review",
    "Deploys go out on Fridays after the release review",
]
# Four restatements nearer each other than any is to a fifth, which says it too: the
# fifth is none of the four's nearest, and only its own read finds them.
CLUSTER = [
    f"Upload tests must each use their own tmp_path{mark} a shared temp dir makes them fail"
    for mark in (":", ";", ",", " -")
]
FIFTH = (
    "Upload tests must each use their own tmp_path: any shared temp dir makes them flaky and fail"
)
