"""DepgraphError: a ValueError with a stable code, whole after pickling."""

from __future__ import annotations

import pickle

import pytest

from depgraph import DepgraphError, ErrorCode


@pytest.mark.parametrize("code", [c.value for c in ErrorCode])
def test_every_code_is_caught_as_a_value_error_and_as_a_depgraph_error(code):
    with pytest.raises(ValueError) as caught:
        raise DepgraphError(code, "bad value", ids=["S1"])
    assert isinstance(caught.value, DepgraphError) and caught.value.code == code
    assert str(caught.value) == f"[{code}] bad value"


def test_an_error_survives_pickling_as_joblib_workers_send_it():
    err = DepgraphError("too_few_groups", "5 folds need at least 5 groups; groups holds 3", n_groups=3)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is DepgraphError
    assert (back.code, back.message, back.details) == ("too_few_groups", err.message, {"n_groups": 3})
    assert str(back) == str(err)


def test_an_unknown_code_is_a_programming_error():
    with pytest.raises(ValueError, match="'bogus' is not a valid ErrorCode"):
        DepgraphError("bogus", "x")
