# Block rounds from Python (antler.blockReduce, antler.allToAll): the class's C++ block fields run
# by name over an element's entries, on every node. Values against numpy; bad arguments raise the
# matching antler error. ctest runs this file at 1-4 ranks.
import numpy as np
import pytest

import antler


@pytest.fixture
def model():
    antler.delete("/b") if antler.exists("/b") else None
    yield
    for p in ("/b", "/g"):
        if antler.exists(p):
            antler.delete(p)


def _values(n):
    return 0.25 * (np.arange(n) ** 2 % 11) - 1.0  # exact in binary: every sum order agrees


@pytest.mark.parametrize("pattern", ["merge", "swap", "broadcast", "allReduce"])
def test_block_reduce_sums_by_pattern(model, user_classes, pattern):
    n = 12
    b = antler.TestBlocks("/b", n)
    v = _values(n)
    antler.vec(b).value = v
    for k, contiguous, divisions in [(2, True, None), (3, False, None), (4, True, [3, 4]),
                                     (2, False, [2, 2, 3])]:
        antler.blockReduce(b, "sum", pattern, k=k, contiguous=contiguous, divisions=divisions)
        r = np.asarray(antler.vec(b).result)
        if pattern == "merge":
            assert r[0] == v.sum()
        elif pattern == "broadcast":
            assert np.all(r == v[0])
        else:
            assert np.all(r == v.sum())
    antler.blockReduce("/b", "sum", "allReduce", rounds=[(0, 3), (0, 4)])
    assert np.all(np.asarray(antler.vec(b).result) == v.sum())


def test_all_to_all_items_reach_their_entries(model, user_classes):
    n = 9
    b = antler.TestBlocks("/b", n)
    received = np.zeros(n, dtype=np.int64)
    checksum = np.zeros(n)
    for g in range(n):
        for i in range(g % 5 + 1):
            item = (g * 7 + 13 * i) % n
            received[item] += 1
            checksum[item] += g * 1000.0 + item
    for k in (2, 3, 4):
        antler.allToAll(b, "spread", k)
        assert np.array_equal(np.asarray(antler.vec(b).received), received)
        assert np.array_equal(np.asarray(antler.vec(b).checksum), checksum)


def test_block_fields_are_documented(user_classes):
    assert list(antler.getFieldNames("TestBlocks", "blockFinfo")) == ["sum", "spread"]
    text = antler._doc_text("TestBlocks")
    assert "Block fields (blockReduce, allToAll)" in text and "sums value over the blocks" in text


def test_block_reduce_bad_input(model, user_classes):
    b = antler.TestBlocks("/b", 6)
    antler.TestBlocks("/g", 3, True)
    with pytest.raises(antler.FieldError) as e:
        antler.blockReduce(b, "nosuch")
    assert "block fields: sum, spread" in str(e.value)
    with pytest.raises(ValueError, match="pattern 'reduce'"):
        antler.blockReduce(b, "sum", "reduce")
    with pytest.raises(ValueError, match="must be >= 2"):
        antler.blockReduce(b, "sum", k=1)
    with pytest.raises(ValueError, match="multiply to the entry count"):
        antler.blockReduce(b, "sum", divisions=[4])
    with pytest.raises(TypeError):
        antler.blockReduce(b, "sum", divisions="23")
    with pytest.raises(TypeError):
        antler.blockReduce(b, "sum", k="two")
    with pytest.raises(ValueError, match="pair"):
        antler.blockReduce(b, "sum", rounds=[(0, 2, 3)])
    with pytest.raises(ValueError, match="is global"):
        antler.blockReduce("/g", "sum")
    with pytest.raises(ValueError):
        antler.blockReduce("/nope", "sum")
    with pytest.raises(ValueError, match="must be >= 2"):
        antler.allToAll(b, "spread", 0)
    antler.vec(b)[4].fail = 1
    with pytest.raises(ValueError, match="the callback of block 4"):
        antler.blockReduce(b, "sum", "swap")
    antler.vec(b)[4].fail = -1
    antler.vec(b).value = np.arange(6.0)
    antler.blockReduce(b, "sum", "allReduce")
    assert np.all(np.asarray(antler.vec(b).result) == 15.0)
