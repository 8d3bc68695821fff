# NSDFWriter: the file read back with h5py equals what Tables recorded in the same run (uniform
# data and spike times), its NSDF layout and attributes, bad input, and bounded memory over a long
# run (in a child process). Runs at 1 and 2 nodes (ctest python.np1 / python.np2): the Tables'
# values do not depend on the node count, so equal files follow.
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import antler

h5py = pytest.importorskip("h5py")

N = 23  # odd: two nodes hold 12 and 11


def _network(tmp_path, name="rec.h5", flush_limit=None):
    """IntFires kicked by a TimeTable through random synapses, a StimulusTable, a writer and the
    Tables that record the same values."""
    dt = 1e-4
    rng = np.random.default_rng(3)
    neurons = antler.IntFire("/n", N)
    nv = antler.vec(neurons)
    nv.thresh = 1.0
    nv.tau = 0.01
    nv.refractoryPeriod = 5e-4
    nv.initVm = rng.uniform(0.0, 0.8, N)
    src = antler.TimeTable("/src", 4)
    for i in range(4):
        antler.vec(src)[i].vector = np.sort(rng.uniform(0, 0.02, 30))
    m = antler.connect(src, "eventOut", "/n/synapse", "addSpike", "Sparse")
    m.setRandomConnectivity(0.7, 5)
    antler.vec("/n/synapse").weight = 0.45
    stim = antler.StimulusTable("/stim")
    stim.vector = [0.0, 1.0, 0.5]
    stim.stopTime = 0.01
    w = antler.NSDFWriter("/w")
    w.filename = str(tmp_path / name)
    if flush_limit:
        w.flushLimit = flush_limit
    antler.connect(w, "requestOut", neurons, "getVm", "Reduce")
    antler.connect(w, "requestOut", stim, "getOutputValue", "Single")
    antler.connect(w, "requestOut", antler.vec(neurons)[5], "getThresh", "Single")
    ev = antler.connect(neurons, "spikeOut", "/w/eventInput", "input", "Sparse")
    ev.pairFill(list(range(N)), [0] * N)
    vm_tabs = antler.Table("/vm", N)
    for i in range(N):
        antler.connect(antler.vec(vm_tabs)[i], "requestOut", antler.vec(neurons)[i], "getVm")
    spk = antler.Table("/spk", N)
    antler.connect(neurons, "spikeOut", spk, "input", "OneToOne")
    stim_tab = antler.Table("/stimtab")
    antler.connect(stim_tab, "requestOut", stim, "getOutputValue")
    antler.setClock(0, dt)
    for path in ("/src", "/n", "/stim"):
        antler.useClock(0, path)
    antler.setClock(1, dt)
    for path in ("/vm", "/spk", "/stimtab", "/w"):
        antler.useClock(1, path)
    return w, vm_tabs, spk, stim_tab, dt


def test_writer_file_equals_tables(model, tmp_path):
    w, vm_tabs, spk, stim_tab, dt = _network(tmp_path, flush_limit=100)  # many small blocks
    antler.reinit()
    antler.start(0.03)
    assert w.samples == 301
    w.close()
    assert not w.isOpen
    vm = np.array([antler.vec(vm_tabs)[i].vector for i in range(N)])
    spikes = [np.asarray(antler.vec(spk)[i].vector) for i in range(N)]
    assert sum(len(s) for s in spikes) > 10  # the network does spike
    with h5py.File(w.filename, "r") as f:
        d = f["/data/uniform/n/Vm"]
        assert d.shape == (N, 301)
        np.testing.assert_array_equal(d[()], vm)
        assert d.attrs["dt"] == dt and d.attrs["tstart"] == 0.0
        assert d.attrs["unit"] == "V" and d.attrs["field"] == "Vm"
        src = [s.decode() if isinstance(s, bytes) else s for s in f["/map/uniform/n"][()]]
        assert src == ["/n[%d]" % i for i in range(N)]
        assert d.dims[0]["source"].name == "/map/uniform/n"
        np.testing.assert_array_equal(f["/data/uniform/stim/outputValue"][0], stim_tab.vector)
        # One neuron's thresh, over a different set of objects of /n: its own population.
        t = f["/data/uniform/n_2/thresh"]
        assert t.shape == (1, 301) and np.all(t[()] == 1.0)
        mp = f["/map/event/n/spikeOut"][()]
        assert len(mp) == N
        for i in range(N):
            ds = f["/data/event/n/spikeOut/%d" % i]
            np.testing.assert_array_equal(ds[()], spikes[i])
            assert ds.attrs["source"] == "/n[%d]" % i
            source = mp[i]["source"]
            assert (source.decode() if isinstance(source, bytes) else source) == "/n[%d]" % i
            assert f[mp[i]["data"]].name == ds.name
        assert f.attrs["nsdf_version"] == "0.1"


def test_writer_every_k_steps(model, tmp_path):
    w, vm_tabs, spk, stim_tab, dt = _network(tmp_path)
    antler.setClock(1, 4 * dt)  # writer and tables sample every 4 steps
    antler.reinit()
    antler.start(0.01)
    w.close()
    vm = np.array([antler.vec(vm_tabs)[i].vector for i in range(N)])
    with h5py.File(w.filename, "r") as f:
        d = f["/data/uniform/n/Vm"]
        assert d.shape == (N, 26) and d.attrs["dt"] == pytest.approx(4 * dt)
        np.testing.assert_array_equal(d[()], vm)


def test_writer_bad_input(model, tmp_path):
    w = antler.NSDFWriter("/w")
    n = antler.IntFire("/n", 3)
    antler.setClock(0, 1e-4)
    antler.useClock(0, "/n")
    antler.useClock(0, "/w")
    with pytest.raises(antler.FieldError, match="Vmm"):
        antler.connect(w, "requestOut", n, "getVmm", "Reduce")
    with pytest.raises(antler.PathError, match="nowhere"):
        antler.connect(w, "requestOut", "/nowhere", "getVm", "Reduce")
    with pytest.raises(antler.TypeError, match="float64"):
        antler.connect(w, "requestOut", antler.Table("/t"), "getVector", "Reduce")
    with pytest.raises(antler.ValueError, match="set filename"):
        antler.reinit()
    antler.connect(w, "requestOut", n, "getVm", "Reduce")
    # A folder that does not exist: nothing is created.
    w.filename = str(tmp_path / "no" / "such" / "dir" / "x.h5")
    with pytest.raises(antler.ValueError, match="does not exist"):
        antler.reinit()
    assert not os.path.exists(w.filename)
    # An existing file is kept unless overwrite is set.
    path = tmp_path / "exists.h5"
    path.write_bytes(b"precious")
    w.filename = str(path)
    with pytest.raises(antler.ValueError, match=r"exists.*overwrite"):
        antler.reinit()
    assert path.read_bytes() == b"precious"
    w.overwrite = True
    antler.reinit()
    antler.start(5e-4)
    w.close()
    with h5py.File(path, "r") as f:
        assert f["/data/uniform/n/Vm"].shape == (3, 6)
    with pytest.raises(antler.ValueError, match="flushLimit"):
        w.flushLimit = 0
    # Starting after close: a clear error, not a silent loss.
    with pytest.raises(antler.StateError, match="no file is open"):
        antler.start(1e-4)


_RSS_CHILD = textwrap.dedent("""
    import resource, sys
    import numpy as np
    import antler
    n, steps, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    neurons = antler.IntFire('/n', n)
    antler.vec(neurons).initVm = np.linspace(0, 0.9, n)
    w = antler.NSDFWriter('/w')
    w.filename = out
    w.overwrite = True
    w.flushLimit = 1 << 18            # 2 MiB blocks
    antler.connect(w, 'requestOut', neurons, 'getVm', 'Reduce')
    antler.setClock(0, 1e-4)
    antler.useClock(0, '/n')
    antler.useClock(0, '/w')
    antler.reinit()
    antler.start(1e-4)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    antler.start((steps - 1) * 1e-4)
    w.close()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    np.save(out + '.vm.npy', antler.vec(neurons).Vm)
    print(before, after, w.samples)
""")


def test_writer_memory_stays_bounded(tmp_path):
    """2e4 objects x 4e3 steps (640 MB of data) through 2 MiB blocks: the child's peak RSS grows by
    less than 64 MiB during the run (the scaled form of 1e5 x 2e4; the buffer, the per-step
    gather and HDF5's chunk cache do not grow with the run)."""
    if antler.numNodes() > 1:
        pytest.skip("runs its own single-node child once (from the 1-node session)")
    n, steps = 20000, 4000
    out = tmp_path / "big.h5"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", _RSS_CHILD, str(n), str(steps), str(out)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    before, after, samples = (int(x) for x in r.stdout.split()[-3:])
    assert samples == steps + 1
    growth_mib = (after - before) / 1024.0
    data_mib = n * (steps + 1) * 8 / 2**20
    print("peak RSS growth %.1f MiB while writing %.0f MiB" % (growth_mib, data_mib))
    assert growth_mib < 64, "peak RSS grew by %.1f MiB" % growth_mib
    with h5py.File(out, "r") as f:
        d = f["/data/uniform/n/Vm"]
        assert d.shape == (n, steps + 1)
        np.testing.assert_array_equal(d[:, steps], np.load(str(out) + ".vm.npy"))
        np.testing.assert_array_equal(d[:, 0], np.linspace(0, 0.9, n))
    out.unlink()


def _record_ab(path, a, b, dt):
    """A writer recording Vm of the IntFire arrays a and b (tick 0) every step (tick 1)."""
    w = antler.NSDFWriter("/w")
    w.filename = str(path)
    antler.connect(w, "requestOut", a, "getVm", "Reduce")
    antler.connect(w, "requestOut", b, "getVm", "Reduce")
    for t in (0, 1):
        antler.setClock(t, dt)
    antler.useClock(0, "/a,/b")
    antler.useClock(1, "/w")
    return w, antler.element("/clock").tickDt[0]


def _decaying(init, tau, dt, samples):
    """IntFire without input, sample k (k = 0: reinit): Vm *= 1 - dt / tau each step, the same
    expression in the same order as IntFire's process. Objects x samples."""
    decay = 1.0 - dt / tau
    out = np.empty((init.size, samples))
    vm = init.copy()
    for k in range(samples):
        out[:, k] = vm
        vm = vm * decay
    return out


def test_writer_readback_every_object_every_step_at_uneven_tiles(model, tmp_path):
    """Every recorded object at every step, read back and compared with a serial loop, for
    object counts that are not multiples of the writer's chunk rows or of its tiles (5003 rows:
    5002 neurons and one of them again through a Single message, in three chunks of 1668, 1668
    and 1667 rows; 2049 rows: 1025 and 1024), and a run whose samples are
    not a multiple of the block (302 samples in blocks of 128): a writer that drops or shifts
    the last row of a tile, or the last columns of the run, fails here."""
    n1, n2 = 5002, 2049
    tau1, tau2 = 0.37, 1.9
    a = antler.vec(antler.IntFire("/a", n1))
    b = antler.vec(antler.IntFire("/b", n2))
    init1 = 1.0 + np.arange(n1) * 1e-3
    init2 = -2.0 + np.sqrt(np.arange(n2) + 0.5)
    a.initVm, a.tau, a.thresh = init1, tau1, 1e9
    b.initVm, b.tau, b.thresh = init2, tau2, 1e9
    w, dt = _record_ab(tmp_path / "uneven.h5", a, b, 1e-4)
    antler.connect(w, "requestOut", a[n1 - 1], "getVm", "Single")
    w.flushLimit = (n1 + n2 + 1) * 130  # 130 samples per block, cut to 128 (whole chunk columns)
    antler.reinit()
    antler.start(301 * dt)
    assert w.samples == 302
    w.close()

    def serial(init, tau, samples):
        return _decaying(init, tau, dt, samples)

    with h5py.File(w.filename, "r") as f:
        da, db = f["/data/uniform/a/Vm"], f["/data/uniform/b/Vm"]
        # One field of one Element is one dataset: the Single message's object is a row too.
        assert da.shape == (n1 + 1, 302) and db.shape == (n2, 302)
        assert da.chunks[0] == 1668 and db.chunks[0] == 1025  # what the docstring assumes
        np.testing.assert_array_equal(da[()], serial(np.append(init1, init1[-1]), tau1, 302))
        np.testing.assert_array_equal(db[()], serial(init2, tau2, 302))
        src = [x.decode() if isinstance(x, bytes) else x for x in f["/map/uniform/a"][()]]
        assert src == ["/a[%d]" % i for i in range(n1)] + ["/a[%d]" % (n1 - 1)]


def test_deleting_a_recorded_element_mid_recording_keeps_the_rest(model, tmp_path):
    # Deleting an Element the writer records, between two runs of one recording: the run goes on
    # (it used to fail with an internal communication error), the deleted rows read NaN from
    # then on, everything else is recorded, and what was recorded before stays in the file.
    a = antler.vec(antler.IntFire("/a", 5))
    b = antler.vec(antler.IntFire("/b", 3))
    a.initVm, a.tau, a.thresh = np.arange(5) + 1.0, 0.5, 1e9
    b.initVm, b.tau, b.thresh = -np.arange(3) - 1.0, 0.25, 1e9
    w, dt = _record_ab(tmp_path / "deleted.h5", a, b, 1e-3)
    w.flushLimit = 8 * 2  # two samples per block: some written before the deletion, some after
    antler.reinit()
    antler.start(4 * dt)
    antler.delete("/a")
    antler.start(3 * dt)
    assert antler.currentTime() == pytest.approx(7 * dt)
    antler.delete("/b")  # nothing left to read: the samples still count
    antler.start(2 * dt)
    assert w.samples == 10
    w.close()

    def serial(init, tau, samples):
        return _decaying(init, tau, dt, samples)

    with h5py.File(w.filename, "r") as f:
        da, db = f["/data/uniform/a/Vm"][()], f["/data/uniform/b/Vm"][()]
    assert da.shape == (5, 10) and db.shape == (3, 10)
    np.testing.assert_array_equal(da[:, :5], serial(np.arange(5) + 1.0, 0.5, 5))
    assert np.isnan(da[:, 5:]).all()
    np.testing.assert_array_equal(db[:, :8], serial(-np.arange(3) - 1.0, 0.25, 8))
    assert np.isnan(db[:, 8:]).all()
