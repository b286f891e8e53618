"""Which fields a rule involves (extraction/rules/involved.py): the set lookup says what the prefix rule says."""

from __future__ import annotations

import random

from extraction.rules.involved import field_and_holders, involved_paths, involves


def by_prefix(named, path: str) -> bool:
    """The rule as the desk first wrote it: the path is a named field or lies inside one."""
    return any(path == n or path.startswith(n + "[") or path.startswith(n + ".") for n in named if n)


def test_the_holders_of_a_path_are_its_lists_and_objects():
    assert field_and_holders("rows[3].votes") == {"rows", "rows[3]", "rows[3].votes"}
    assert field_and_holders("total") == {"total"}
    assert field_and_holders("") == set()


def test_involves_agrees_with_the_prefix_rule_on_random_paths():
    rng = random.Random(14)
    alphabet = "ab[].0"
    for _ in range(20_000):
        path = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7)))
        named = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5))) for _ in range(rng.randint(0, 3))]
        if path and rng.random() < 0.5:
            named.append(path[: rng.randint(0, len(path))])
        assert involves(named, path) == by_prefix(named, path), (named, path)


def test_involved_paths_keeps_the_order_of_the_paths():
    paths = ["acta_id", "rows[0].votes", "rows[0].votes_words", "rows[1].votes", "valid_votes"]
    assert involved_paths(["rows[0]", "valid_votes"], paths) == ["rows[0].votes", "rows[0].votes_words", "valid_votes"]
    assert involved_paths(["rows"], paths) == ["rows[0].votes", "rows[0].votes_words", "rows[1].votes"]
    assert involved_paths([], paths) == []
