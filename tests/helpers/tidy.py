"""Memories tidy proposes to change: two that say the same thing (a merge), two that may say
the opposite (a replacement)."""

SAME = [
    "Upload tests must each use their own tmp_path: a shared temp dir makes them fail",
    "Upload tests must each use their own tmp_path; a shared temp dir makes them fail",
]
OPPOSED = [
    "Deploys go out on Tuesdays after the release review",
    "Deploys go out on Fridays after the release review",
]
