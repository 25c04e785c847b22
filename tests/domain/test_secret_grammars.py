"""Every credential of a published format is refused, however it is pasted: tokens drawn
from each format's grammar (bench/secret_grammars.py), in each context a paste has. The
corpus tests' samples were written by the hand that wrote the rules; these are not.

Left out, as the screen documents: a token whose random body repeats one or two letters
(a placeholder's `xxxxxxxx`), or holds a placeholder's word in one case (`your`, `HERE`),
which a random token does about once in 10,000 (bench/secret_grammars.py measures it)."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.domain.secrets.find import find_secrets
from app.domain.secrets.look_alikes import _WORDS
from bench.secret_grammars import CONTEXTS, GRAMMARS, Grammar, Part

PLACEHOLDER_LIKE = re.compile(
    "|".join(form for word in _WORDS for form in (word, word.upper(), word.title()))
)


def random_run(part: Part) -> st.SearchStrategy[str]:
    """A run of the part's alphabet as a provider issues it: random, so not one or two
    letters repeated, and no placeholder's word (see above)."""
    size = {"min_size": part.least, "max_size": part.most or part.least}
    return st.text(alphabet=part.alphabet, **size).filter(
        lambda run: len(set(run)) >= min(8, len(run) // 2) and not PLACEHOLDER_LIKE.search(run)
    )


def drawn(grammar: Grammar) -> st.SearchStrategy[str]:
    pieces = [st.just(p) if isinstance(p, str) else random_run(p) for p in grammar.pieces]
    return st.tuples(st.sampled_from(grammar.prefixes), *pieces).map("".join)


@pytest.mark.parametrize("name", list(GRAMMARS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_every_token_of_a_published_format_is_refused_wherever_it_is_pasted(
    name: str, data: st.DataObject
) -> None:
    token = data.draw(drawn(GRAMMARS[name]))
    assume(not PLACEHOLDER_LIKE.search(token))  # across two runs, as a run is above
    context = data.draw(st.sampled_from(list(CONTEXTS)))
    pasted = CONTEXTS[context](token)
    found = find_secrets(pasted)
    assert found, f"{name} stored when pasted {context}: {pasted!r}"
    assert any(token in f.value or f.value in token for f in found), found
