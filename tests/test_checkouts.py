"""What another machine may ask of a host's checkouts: every request is read, none is trusted."""

from hypothesis import given
from hypothesis import strategies as st

from kandev_web import checkouts

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(operation=json_values | st.sampled_from(list(checkouts.OPERATIONS)), args=json_values)
def test_any_request_is_read_without_a_crash_and_a_refused_one_says_why(operation, args):
    found = checkouts.problems(operation, args)

    assert all(isinstance(problem, str) and problem for problem in found)
    if not (isinstance(operation, str) and operation in checkouts.OPERATIONS and isinstance(args, dict)):
        assert found


@given(task_id=st.integers(min_value=1), taken=st.lists(st.text(min_size=1), max_size=5))
def test_a_well_formed_make_request_is_accepted_and_a_boolean_is_no_number(task_id, taken):
    args = {"repo": "/srv/repo", "base": "main", "task_id": task_id, "branch_stem": "kandev/task-1", "taken": taken}

    assert checkouts.problems("make", args) == []
    assert checkouts.problems("make", {**args, "task_id": True}) == ["task_id must be int"]
    assert checkouts.problems("make", {**args, "taken": [*taken, 3]}) == ["taken must be a list of strings"]
