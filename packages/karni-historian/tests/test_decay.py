"""The decay curve and budget pressure (docs/historian/decay.md)."""

from __future__ import annotations

import itertools
import random

import pytest
from karni_historian.brief.decay import base_tier, half_life, pressure, tier

CURVE_CASES = [
    (1, 1, 8, 1),
    (5, 50, 1, 1),
    (8, 50, 1, 2),
    (13, 50, 1, 2),
    (21, 50, 1, 3),
    (34, 50, 1, 4),
    (55, 50, 1, 4),
    (89, 50, 1, 5),
    (89, 75, 1, 4),
    (144, 75, 1, 5),
    (200, 100, 1, 4),
    (400, 100, 1, 5),
    (21, 25, 1, 4),
    (34, 25, 1, 5),
    (55, 40, 1, 5),
    (13, 50, 2, 3),
    (55, 50, 0.5, 3),
    (144, 90, 0.25, 2),
    (1000, 100, 0.1, 3),
    (1000, 90, 0.1, 4),
    (2, 1, 8, 3),
    (3, 1, 8, 5),
    (8, 1, 1, 3),
    (13, 1, 0.1, 1),
]


@pytest.mark.parametrize(("index", "importance", "p", "expected"), CURVE_CASES)
def test_curve_cases(index: int, importance: int, p: float, expected: int) -> None:
    assert tier(index, importance, p) == expected


def test_near_boundary_z_value() -> None:
    # (2, 1, 8) sits at z = 1.297, just under the P3/P4 boundary 1.322.
    assert round(1 / half_life(1, 8), 3) == 1.297


# Tier spans: importance, pressure, then the last index of P1..P4 and the first archived index.
RANGE_TABLE = [
    (50, 1, 5, 18, 32, 63, 64),
    (50, 2, 3, 9, 16, 32, 33),
    (50, 0.5, 10, 35, 64, 125, 126),
    (50, 0.1, 49, 175, 318, 621, 622),
    (75, 1, 10, 35, 64, 125, 126),
    (25, 1, 3, 9, 16, 32, 33),
    (100, 1, 20, 70, 127, 249, 250),
    (1, 1, 2, 5, 9, 16, 17),
]


@pytest.mark.parametrize(("importance", "p", "e1", "e2", "e3", "e4", "archived"), RANGE_TABLE)
def test_tier_ranges_by_index(
    importance: int, p: float, e1: int, e2: int, e3: int, e4: int, archived: int
) -> None:
    expected = [1] * e1 + [2] * (e2 - e1) + [3] * (e3 - e2) + [4] * (e4 - e3) + [5] * 5
    got = [tier(i, importance, p) for i in range(1, archived + 5)]
    assert got == expected


def test_half_life_values() -> None:
    assert half_life(50, 1) == 24
    assert half_life(75, 1) == 48
    assert half_life(25, 1) == 12
    assert half_life(100, 1) == 96
    assert half_life(50, 0.01) == 240  # pressure floor 0.1
    assert round(half_life(1, 1), 2) == 6.17
    assert half_life(500, 1) == half_life(100, 1)  # importance clamped
    assert half_life(-3, 1) == half_life(1, 1)


def test_index_below_one_counts_as_newest() -> None:
    assert tier(0, 1, 100) == 1
    assert tier(-5, 1, 100) == 1


def test_importance_100_archives_eventually() -> None:
    assert tier(100_000, 100, 1) == 5


def test_rendered_tier_and_base_tier_agree() -> None:
    for index, imp, p in itertools.product([1, 2, 7, 30, 90, 500], [1, 50, 99], [0.1, 1, 7]):
        assert tier(index, imp, p) == base_tier(index, imp, p)
        assert tier(index, imp, p) in {1, 2, 3, 4, 5}


def test_property_monotone_in_age_importance_and_pressure() -> None:
    rng = random.Random(8)
    for _ in range(2000):
        index = rng.randint(1, 2000)
        imp = rng.randint(1, 100)
        p = rng.choice([0.05, 0.1, 0.3, 1.0, 2.5, 9.0])
        t = tier(index, imp, p)
        assert tier(index + rng.randint(1, 50), imp, p) >= t  # older is never better
        assert tier(index, min(100, imp + rng.randint(1, 30)), p) <= t  # more important never worse
        assert tier(index, imp, p * rng.uniform(1.01, 4)) >= t  # more pressure never better
        assert tier(1, imp, p) == 1


def _mix_1() -> list[tuple[int, int]]:
    return [(i, 50) for i in range(1, 51)]


def _mix_2() -> list[tuple[int, int]]:
    return [(i + 1, (i % 100) + 1) for i in range(200)]


def _mix_3() -> list[tuple[int, int]]:
    return [(i + 1, (10, 50, 90)[i % 3]) for i in range(500)]


@pytest.mark.parametrize(
    ("items", "budget", "expected"),
    [
        (_mix_1(), 60000, 0.1),
        (_mix_1(), 20000, 0.19385),
        (_mix_1(), 8000, 0.484625),
        (_mix_1(), 2000, 1.9385),
        (_mix_1(), 500, 7.754),
        (_mix_2(), 60000, 0.1),
        (_mix_2(), 20000, 0.17375),
        (_mix_2(), 8000, 0.434375),
        (_mix_2(), 2000, 1.7375),
        (_mix_2(), 500, 6.95),
        (_mix_3(), 60000, 0.10255),
        (_mix_3(), 20000, 0.30765),
        (_mix_3(), 8000, 0.769125),
        (_mix_3(), 2000, 3.0765),
        (_mix_3(), 500, 12.306),
    ],
)
def test_pressure_one_pass(items: list[tuple[int, int]], budget: int, expected: float) -> None:
    assert pressure(items, budget) == pytest.approx(expected, rel=1e-12)


def test_pressure_p1_natural_cost_working() -> None:
    # 5·322 + 13·109 + 14·35 + 18·20 = 3877, so budget 3877 gives exactly 1.
    assert 5 * 322 + 13 * 109 + 14 * 35 + 18 * 20 == 3877
    assert pressure(_mix_1(), 3877) == 1.0
