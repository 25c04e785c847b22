"""What more than one test module uses: fixtures, helpers and data, each module named for
what it holds. A test module imports from here (or gets a fixture from its conftest.py),
never from another test module (tests/contracts/test_test_imports.py)."""
