"""overlap-fills' decisions (schedc.decisions.overlap_fills): which fills join the command group before them."""

from __future__ import annotations

from schedc.decisions.overlap_fills import Command, groups


def kernel(*ranges):
    return Command(False, tuple(ranges))


def fill(*ranges):
    return Command(True, tuple(ranges))


def test_a_fill_joins_the_command_before_it_when_they_share_no_byte():
    assert groups([kernel(("a", 0, 64), ("a", 64, 64)), fill(("a", 128, 64))]) == [[0, 1]]


def test_a_fill_waits_for_a_command_that_touches_its_bytes():
    # [100, 164) meets the kernel's [64, 128) by 28 bytes
    assert groups([kernel(("a", 0, 64), ("a", 64, 64)), fill(("a", 100, 64))]) == [[0], [1]]
    # ranges that only touch end to start share no byte
    assert groups([kernel(("a", 0, 64)), fill(("a", 64, 64))]) == [[0, 1]]


def test_other_resources_never_share_bytes():
    assert groups([kernel(("a", 0, 64)), fill(("b", 0, 64))]) == [[0, 1]]


def test_unknown_ranges_and_first_commands_stay_in_line():
    assert groups([fill(("a", 0, 64)), kernel(("a", 64, 64))]) == [[0], [1]]
    assert groups([Command(False, None), fill(("a", 0, 64))]) == [[0], [1]]
    assert groups([kernel(("a", 0, 64)), Command(True, None)]) == [[0], [1]]


def test_fills_in_a_row_join_while_every_byte_is_new_to_the_group():
    commands = [kernel(("a", 0, 64)), fill(("a", 64, 64)), fill(("a", 128, 64)), fill(("a", 64, 64)), kernel(("a", 64, 64))]
    # the third fill meets the first one's bytes: it starts a group of its own
    assert groups(commands) == [[0, 1, 2], [3], [4]]


def test_kernels_never_join_a_group():
    assert groups([kernel(("a", 0, 64)), kernel(("a", 128, 64))]) == [[0], [1]]
