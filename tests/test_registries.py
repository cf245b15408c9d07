"""Every list of the project has one home, and each entry has all of its parts: a list entry
that lacks one fails here, naming the entry (not silently somewhere else)."""

from __future__ import annotations

import pytest

from leanindex.engine.filters import FILTERS
from leanindex.errors import EXIT_STATUS, HTTP_STATUS, OUTCOME_EXIT, ErrorCode
from leanindex.models import NOT_FILTERS, SearchRequest


def test_every_search_request_filter_field_has_its_filter_class() -> None:
    """A field added to `SearchRequest` is a filter unless listed in `NOT_FILTERS`; one without
    its `SearchFilter` class in `engine.filters.FILTERS` would be accepted and ignored."""
    filter_fields = set(SearchRequest.model_fields) - set(NOT_FILTERS)
    classes = {f.field: f.__name__ for f in FILTERS}
    assert filter_fields - set(classes) == set(), "request fields without a filter class"
    assert set(classes) - filter_fields == set(), "filter classes reading no request field"
    assert set(NOT_FILTERS) <= set(SearchRequest.model_fields)
    assert len(classes) == len(FILTERS), "two filter classes read one field"


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_error_code_has_an_http_and_an_exit_status(code: ErrorCode) -> None:
    assert code in HTTP_STATUS and 400 <= HTTP_STATUS[code] <= 599
    assert code in EXIT_STATUS and EXIT_STATUS[code] not in OUTCOME_EXIT.values()
