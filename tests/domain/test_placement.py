"""The input rules of a tenant's isolation on a Citus cluster (app/domain/placement.py)."""

from __future__ import annotations

import pytest

from app.domain.errors import InvalidInputError
from app.domain.placement import Node, isolation_request


def test_a_worker_is_named_host_colon_port() -> None:
    request = isolation_request(" acme ", "10.0.0.5:5432", "force_logical")
    assert request.tenant == "acme"
    assert request.to == Node("10.0.0.5", 5432)
    assert request.transfer_mode == "force_logical"
    assert isolation_request("acme", "::1:6432", "auto").to == Node("::1", 6432)
    assert isolation_request("acme", None, "block_writes").to is None


@pytest.mark.parametrize("to", ["10.0.0.5", "10.0.0.5:", ":5432", "h:0", "h:65536", "h:54x"])
def test_anything_else_is_refused_naming_the_field(to: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        isolation_request("acme", to, "block_writes")
    assert refused.value.field == "to"


def test_a_tenant_and_a_transfer_mode_citus_knows_are_required() -> None:
    with pytest.raises(InvalidInputError) as empty:
        isolation_request("  ", None, "block_writes")
    assert empty.value.field == "tenant"
    with pytest.raises(InvalidInputError) as unknown:
        isolation_request("acme", None, "copy")
    assert unknown.value.field == "transfer_mode"
