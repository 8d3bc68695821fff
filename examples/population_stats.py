"""Population statistics of a spiking network, written as a serial MOOSE-style script.

10 000 IntFire neurons (size and duration are options) are driven by RandSpike Poisson inputs
through Sparse random connectivity with synaptic delays, and excite/inhibit each other through a
second Sparse message. A Stats object reduces Vm over the whole population every step, a SpikeStats
object the population firing rate; Tables record both. At the end the script prints a summary and
writes a CSV of the time series and a PNG plot. With --nsdf FILE an NSDFWriter also streams every
neuron's Vm (every step), the Tables' series and every spike time into FILE (HDF5, NSDF layout).

Run it serially or on several nodes, unchanged:
    python3 examples/population_stats.py --out /tmp/antler-demo
    mpirun -n 2 python3 examples/population_stats.py --out /tmp/antler-demo
"""
import argparse
import csv
import os
import time

import numpy as np

import antler as moose


def build(args):
    rng = np.random.default_rng(args.seed)
    moose.seed(args.seed)
    moose.Neutral("/net")
    neurons = moose.IntFire("/net/neurons", args.neurons)
    inputs = moose.RandSpike("/net/inputs", args.inputs)
    nv = moose.vec(neurons)
    nv.thresh = 1.0
    nv.tau = 0.02
    nv.refractoryPeriod = 0.002
    nv.Vm = rng.uniform(0.0, 0.9, args.neurons)  # initVm: a spread of starting potentials
    nv.initVm = nv.Vm
    moose.vec(inputs).rate = args.rate

    # Input: each neuron hears about `fanin` of the Poisson sources, 1-3 ms away.
    m_in = moose.connect(inputs, "spikeOut", "/net/neurons/synapse", "addSpike", "Sparse")
    m_in.setRandomConnectivity(args.fanin / args.inputs, args.seed + 1)
    in_per = nv.numSynapses.astype(np.int64)  # input synapses per neuron
    # Recurrent: each neuron reaches about `fanout` others, 1-5 ms away; 20 % inhibitory. These
    # synapses follow the input ones on every neuron.
    m_rec = moose.connect(neurons, "spikeOut", "/net/neurons/synapse", "addSpike", "Sparse")
    m_rec.setRandomConnectivity(args.fanout / args.neurons, args.seed + 2)
    counts = nv.numSynapses.astype(np.int64)
    fieldDim = moose.syncDataHandler("/net/neurons/synapse")
    total = int(counts.sum())
    assert total == m_in.numEntries + m_rec.numEntries

    # Weights and delays of every synapse, neuron by neuron (numpy, no loop over neurons).
    owner = np.repeat(np.arange(args.neurons), counts)
    local = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    is_input = local < in_per[owner]
    sign = np.where(rng.random(total) < 0.2, -4.0, 1.0)
    syn = moose.vec("/net/neurons/synapse")
    syn.weight = np.where(is_input, args.win, args.wrec * sign)
    syn.delay = np.where(is_input, rng.uniform(1e-3, 3e-3, total), rng.uniform(1e-3, 5e-3, total))
    sizes = (m_in.numEntries, m_rec.numEntries, fieldDim)

    stats = moose.Stats("/net/stats")
    moose.connect(stats, "reduce", nv, "getVm", "Reduce")
    rate = moose.SpikeStats("/net/rate")
    moose.connect(rate, "reduce", nv, "getSpiked", "Reduce")
    tabs = {}
    for name, src, field in (("mean", stats, "getMean"), ("sdev", stats, "getSdev"), ("rate", rate, "getRate")):
        tabs[name] = moose.Table("/net/%s_table" % name)
        moose.connect(tabs[name], "requestOut", src, field, "Single")

    # Tick 0: inputs and neurons; tick 1: the reductions (after the neurons' step); tick 2: the
    # tables (after the reductions have been digested).
    for tick in (0, 1, 2):
        moose.setClock(tick, args.dt)
    moose.useClock(0, "/net/inputs")
    moose.useClock(0, "/net/neurons")
    moose.useClock(1, "/net/stats")
    moose.useClock(1, "/net/rate")
    moose.useClock(2, "/net/##[TYPE=Table]")
    return nv, stats, rate, tabs, sizes


def add_writer(path, nv, stats, rate):
    """An NSDFWriter streaming to HDF5 in blocks: /data/uniform/neurons/Vm (neurons x steps), the
    series the Tables hold, and /data/event/neurons/spikeOut/<i> (spike times of neuron i)."""
    writer = moose.NSDFWriter("/net/nsdf")
    writer.filename = path
    writer.overwrite = True
    moose.connect(writer, "requestOut", nv, "getVm", "Reduce")
    for src, field in ((stats, "getMean"), (stats, "getSdev"), (rate, "getRate")):
        moose.connect(writer, "requestOut", src, field, "Single")
    ev = moose.connect(nv, "spikeOut", "/net/nsdf/eventInput", "input", "Sparse")
    ev.pairFill(list(range(len(nv))), [0] * len(nv))
    moose.useClock(2, "/net/nsdf")
    return writer


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--neurons", type=int, default=10000)
    p.add_argument("--inputs", type=int, default=1000, help="Poisson sources")
    p.add_argument("--rate", type=float, default=10.0, help="Poisson rate (Hz)")
    p.add_argument("--fanin", type=float, default=20.0, help="inputs per neuron (mean)")
    p.add_argument("--fanout", type=float, default=20.0, help="recurrent targets per neuron (mean)")
    p.add_argument("--win", type=float, default=0.25, help="input weight")
    p.add_argument("--wrec", type=float, default=0.05, help="recurrent excitatory weight")
    p.add_argument("--duration", type=float, default=1.0, help="model time (s)")
    p.add_argument("--dt", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=0, help="threads per node (default: OMP_NUM_THREADS)")
    p.add_argument("--out", default="population_stats_out", help="folder for the CSV and PNG")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--nsdf", default="", help="also write Vm of every neuron and the spikes to this HDF5 file")
    args = p.parse_args()
    if args.threads:
        moose.setNumThreads(args.threads)

    t0 = time.time()
    nv, stats, rate, tabs, sizes = build(args)
    writer = add_writer(args.nsdf, nv, stats, rate) if args.nsdf else None
    t_build = time.time() - t0
    moose.reinit()
    t0 = time.time()
    moose.start(args.duration)
    t_run = time.time() - t0
    if writer is not None:
        writer.close()  # writes the last block; the file can be read from here on

    mean, sdev, fr = (np.asarray(tabs[k].vector) for k in ("mean", "sdev", "rate"))
    t = args.dt * np.arange(len(mean))  # a Table holds the value at reinit, then one per step
    vm = nv.Vm
    os.makedirs(args.out, exist_ok=True)
    csv_path = os.path.join(args.out, "population_stats.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time_s", "mean_Vm", "sdev_Vm", "rate_Hz"])
        for row in zip(t, mean, sdev, fr):
            w.writerow(["%.6f" % row[0]] + ["%.17g" % x for x in row[1:]])

    print("antler population stats: %d IntFire neurons, %d Poisson inputs, %d node(s) x %d thread(s)"
          % (args.neurons, args.inputs, moose.numNodes(), moose.getNumThreads()))
    print("synapses: %d input + %d recurrent (largest per neuron: %d)" % sizes)
    print("simulated %.3f s in %d steps of %g s: build %.2f s, run %.2f s" % (
        moose.currentTime(), len(mean) - 1, args.dt, t_build, t_run))
    print("mean Vm over the run %.4f (sdev across neurons %.4f); mean firing rate %.2f Hz"
          % (mean.mean(), sdev.mean(), fr.mean()))
    print("last step: Stats mean %.6f sdev %.6f min %.6f max %.6f; numpy over vec.Vm: mean %.6f sdev %.6f"
          % (stats.mean, stats.sdev, stats.min, stats.max, vm.mean(), vm.std()))
    print("result: spikes=%d mean_Vm=%.9f rate=%.6f" % (int(round(fr.sum() * args.dt * args.neurons)),
                                                       mean.mean(), fr.mean()))
    print("wrote %s" % csv_path)
    if writer is not None:
        print("wrote %s (NSDF: Vm of %d neurons x %d samples, spike times)" % (args.nsdf, args.neurons, writer.samples))
    if not args.no_plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
        a1.plot(t, mean, color="C0", lw=0.8, label="mean Vm")
        a1.fill_between(t, mean - sdev, mean + sdev, color="C0", alpha=0.25, label="mean +/- sdev")
        a1.set_ylabel("Vm")
        a1.legend(loc="upper right")
        a1.set_title("%d IntFire neurons, %d node(s)" % (args.neurons, moose.numNodes()))
        win = max(1, int(round(5e-3 / args.dt)))
        smooth = np.convolve(fr, np.ones(win) / win, mode="same")
        a2.plot(t, smooth, color="C3", lw=0.8)
        a2.set_ylabel("population rate (Hz, 5 ms mean)")
        a2.set_xlabel("time (s)")
        fig.tight_layout()
        png_path = os.path.join(args.out, "population_stats.png")
        fig.savefig(png_path, dpi=120)
        print("wrote %s" % png_path)


if __name__ == "__main__":
    main()
