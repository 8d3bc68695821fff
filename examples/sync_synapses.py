"""syncDataHandler: make every node agree on the size of an array field.

Each IntFire holds its own number of synapses, and each node only sees the neurons it owns. After
synapses are added (here: neuron i gets i % 50 of them, then a random Sparse message appends more),
antler.syncDataHandler finds the largest count on any neuron of any node through the reduce path
(ReduceFieldDimension) and sets the field element's fieldDimension everywhere.

    python3 examples/sync_synapses.py
    mpirun -n 2 python3 examples/sync_synapses.py
"""
import numpy as np

import antler as moose

n = 1000
moose.Neutral("/net")
neurons = moose.IntFire("/net/neurons", n)
nv = moose.vec(neurons)
nv.numSynapses = np.arange(n) % 50
syn = moose.vec("/net/neurons/synapse")
print("before sync: fieldDimension =", syn.fieldDimension)
print("syncDataHandler ->", moose.syncDataHandler(syn))

sources = moose.RandSpike("/net/sources", 200)
m = moose.connect(sources, "spikeOut", syn, "addSpike", "Sparse")
m.setRandomConnectivity(0.05, 7)  # appends about 10 more synapses to every neuron
dim = moose.syncDataHandler("/net/neurons/synapse")
counts = nv.numSynapses
print("after a Sparse message: syncDataHandler ->", dim)
print("result: fieldDimension=%d max_numSynapses=%d total_synapses=%d nodes=%d"
      % (dim, counts.max(), counts.sum(), moose.numNodes()))
print("check:", "OK" if dim == counts.max() and len(syn.weight) == counts.sum() else "MISMATCH")
