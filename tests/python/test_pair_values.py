"""Msg.pairFill with field values: one value per pair, in pair order (Brian2's and NEST's way), set
on the synapse each pair makes. The expected layout is computed here in plain Python from the
rule MOOSE's synapse vecs follow (each parent's synapses message by message, each message's by
source, a repeated pair in the order given), independently of antler; runs at 1 and 2 nodes."""
import numpy as np
import pytest

import antler


def expected(parents, messages):
    """Per-synapse values in vec order (parent by parent), for messages [(src, dst, {field: values})]
    filled one after another onto the same field element."""
    out = {}
    for d in range(parents):
        for src, dst, fields in messages:
            ks = sorted((k for k in range(len(src)) if dst[k] == d), key=lambda k: (src[k], k))
            for name, values in fields.items():
                out.setdefault(name, []).extend(values[k] for k in ks)
    return {name: np.array(v) for name, v in out.items()}


def network(n_in=7, n=5):
    antler.Neutral("/net")
    inputs = antler.RandSpike("/net/in", n_in)
    neurons = antler.IntFire("/net/n", n)
    return inputs, neurons


@pytest.mark.parametrize("order", ["by source", "shuffled"])
def test_values_in_pair_order_reach_the_synapse_each_pair_made(model, order):
    inputs, neurons = network()
    rng = np.random.default_rng(5)
    # Two messages onto the same synapses (input, then recurrent), pairs repeated on purpose.
    src1 = rng.integers(0, 7, 40)
    dst1 = rng.integers(0, 5, 40)
    src1[3], dst1[3] = src1[10], dst1[10]
    src2 = rng.integers(0, 5, 25)
    dst2 = rng.integers(0, 5, 25)
    if order == "by source":
        k1, k2 = np.argsort(src1, kind="stable"), np.argsort(src2, kind="stable")
        src1, dst1, src2, dst2 = src1[k1], dst1[k1], src2[k2], dst2[k2]
    w1, d1 = rng.uniform(0, 1, 40), rng.uniform(0, 5e-3, 40)
    w2 = rng.uniform(-1, 0, 25)
    m1 = antler.connect(inputs, "spikeOut", "/net/n/synapse", "addSpike", "Sparse")
    m1.pairFill(src1, dst1, weight=w1, delay=d1)
    m2 = antler.connect(neurons, "spikeOut", "/net/n/synapse", "addSpike", "Sparse")
    m2.pairFill(src2.tolist(), dst2.tolist(), weight=list(w2), delay=2e-3)  # any sequence, a number
    assert m1.numEntries == 40 and m2.numEntries == 25
    want = expected(5, [(src1, dst1, {"weight": w1, "delay": d1}),
                        (src2, dst2, {"weight": w2, "delay": [2e-3] * 25})])
    syn = antler.vec("/net/n/synapse")
    assert len(syn.weight) == 65
    np.testing.assert_array_equal(syn.weight, want["weight"])
    np.testing.assert_array_equal(syn.delay, want["delay"])
    # The same as the caller's sort and a whole-vec write, the way a MOOSE script must do it.
    order = np.lexsort((np.arange(65), np.concatenate([src1, src2]) + np.repeat([0, 100], [40, 25]),
                        np.concatenate([dst1, dst2])))
    np.testing.assert_array_equal(syn.weight, np.concatenate([w1, w2])[order])


def test_compact_synapses_take_values_in_their_type(model):
    inputs, neurons = network()
    m = antler.connect(inputs, "spikeOut", "/net/n/compactSynapse", "addSpike", "Sparse")
    src, dst = [6, 0, 3, 0, 6], [1, 1, 4, 0, 1]
    w = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    m.pairFill(np.array(src, dtype=np.uint32), np.array(dst, dtype=np.uint32), weight=w)
    want = expected(5, [(src, dst, {"weight": w.astype(np.float32)})])["weight"]
    np.testing.assert_array_equal(antler.vec("/net/n/compactSynapse").weight, want)


def test_refused_field_values_leave_the_message_and_synapses_unchanged(model):
    inputs, neurons = network()
    m = antler.connect(inputs, "spikeOut", "/net/n/synapse", "addSpike", "Sparse")
    mc = antler.connect(inputs, "spikeOut", "/net/n/compactSynapse", "addSpike", "Sparse")
    plain = antler.connect(inputs, "spikeOut", neurons, "activation", "Sparse")
    src, dst = [0, 1, 2], [4, 3, 2]
    cases = [
        (antler.FieldError, lambda: m.pairFill(src, dst, wieght=[1, 2, 3]),
         ["pairFill", "wieght", "Synapse", "weight", "delay"]),
        (ValueError, lambda: m.pairFill(src, dst, weight=[1.0, 2.0]),
         ["pairFill", "2 values", "Synapse.weight", "3 pairs"]),
        (TypeError, lambda: m.pairFill(src, dst, weight=["a", "b", "c"]), ["pairFill", "weight"]),
        (ValueError, lambda: mc.pairFill(src, dst, weight=[1.0, 1e39, 2.0]),
         ["weight", "float"]),
        (ValueError, lambda: plain.pairFill(src, dst, weight=[1.0, 2.0, 3.0]),
         ["pairFill", "/net/n", "field element"]),
        (IndexError, lambda: m.pairFill(src, [4, 3, 5], weight=[1.0, 2.0, 3.0]),
         ["pairFill", "destination index 5"]),
    ]
    for kind, call, words in cases:
        with pytest.raises(kind) as err:
            call()
        for w in words:
            assert w in str(err.value), (w, str(err.value))
        assert m.numEntries == 0 and mc.numEntries == 0 and plain.numEntries == 0
        assert len(antler.vec("/net/n/synapse").weight) == 0
        assert len(antler.vec("/net/n/compactSynapse").weight) == 0
    m.pairFill(src, dst, weight=[1.0, 2.0, 3.0])  # and then it works
    np.testing.assert_array_equal(antler.vec("/net/n/synapse").weight, [3.0, 2.0, 1.0])
