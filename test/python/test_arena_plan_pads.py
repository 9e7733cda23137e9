"""Persistent fills' decisions (schedc.decisions.arena_plan_pads): which padded buffers share pinned bytes."""

from __future__ import annotations

from schedc.decisions.arena_plan import Slice, plan_arena, verify
from schedc.decisions.arena_plan import Pad, pin


def test_pads_of_one_key_alive_at_different_times_share_one_pinned_copy():
    slices = [Slice(0, 2, 100), Slice(2, 4, 300), Slice(3, 5, 100), Slice(6, 7, 100)]
    pinning = pin(slices, [Pad(0, "k"), Pad(2, "k"), Pad(3, "k")])
    assert pinning.copies == ((0, 2, 3),)
    # the unpinned slice first, then the copy, alive from the first step to the last
    assert pinning.slices == (Slice(2, 4, 300), Slice(0, 7, 100))
    assert pinning.planned == (1, 0, 1, 1)
    assert pinning.pinned_bytes == 100


def test_pads_alive_at_once_or_of_other_keys_get_copies_of_their_own():
    slices = [Slice(0, 3, 64), Slice(2, 5, 64), Slice(4, 6, 64), Slice(1, 2, 128)]
    pinning = pin(slices, [Pad(0, "k"), Pad(1, "k"), Pad(2, "k"), Pad(3, "other")])
    # 0 and 2 do not meet (a copy is reused once its last member is dead); 1 meets both
    assert sorted(pinning.copies) == [(0, 2), (1,), (3,)]
    assert pinning.pinned_bytes == 64 + 64 + 128


def test_a_pinned_copy_meets_no_other_slice_in_the_planned_arena():
    """The arena may reuse a dead pad's bytes for another slice; pinned, it may not."""
    slices = [Slice(0, 1, 256), Slice(2, 3, 256), Slice(4, 5, 256)]
    unpinned = plan_arena(slices, 64)
    assert unpinned.plan.size == 256  # one slot, reused three times
    pinning = pin(slices, [Pad(0, "k")])
    report = plan_arena(list(pinning.slices), 64)
    offsets = pinning.offsets(report.plan.offsets)
    assert report.plan.size == 512
    assert offsets[0] not in (offsets[1], offsets[2])
    assert verify(slices, offsets, 64, report.plan.size) == []


def test_no_pads_leaves_the_slices_as_they_are():
    slices = [Slice(0, 1, 64), Slice(1, 2, 64)]
    pinning = pin(slices, [])
    assert pinning.slices == tuple(slices) and pinning.copies == () and pinning.offsets([5, 7]) == (5, 7)
