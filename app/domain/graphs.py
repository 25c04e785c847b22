"""Which repositories have an HNSW graph of their own (migration 0043): one of at least
REPOSITORY_GRAPH_ROWS live memories gets one, which its searches walk instead of reading it
whole; one that falls below half of that loses it (the half: a repository near the line is
not built and dropped by turns)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class RepositoryGraph:
    """A repository that has or may need a graph; tenant and repository are None for a
    graph whose repository has no live memory left."""

    name: str
    tenant_id: str | None
    source_repo: str | None
    live_rows: int
    built: bool
    valid: bool  # false: a build that was interrupted (CONCURRENTLY leaves it invalid)


@dataclass(frozen=True, slots=True)
class GraphPlan:
    build: list[RepositoryGraph] = field(default_factory=list)
    drop: list[RepositoryGraph] = field(default_factory=list)
    keep: list[RepositoryGraph] = field(default_factory=list)


def graph_plan(graphs: list[RepositoryGraph], min_rows: int) -> GraphPlan:
    """What to build, drop and keep: a graph for each repository of `min_rows` or more
    (again where a build was interrupted), none for one below half of it, and none at all
    when `min_rows` is 0."""
    plan = GraphPlan()
    for graph in graphs:
        if min_rows > 0 and graph.live_rows >= min_rows and not (graph.built and graph.valid):
            plan.build.append(graph)
        elif graph.built and (min_rows == 0 or graph.live_rows < min_rows / 2 or not graph.valid):
            plan.drop.append(graph)
        elif graph.built:
            plan.keep.append(graph)
    return plan
