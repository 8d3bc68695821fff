"""HDF5DataWriter (MOOSE's plain recorder): every recorded object at every step read back and
compared with a serial loop, MOOSE's dataset names (/a[0]/n[3]/vm), no sample at reinit, the
flush limit and chunking at counts that do not divide, the six attribute kinds, modes 1, 2 and 4,
bad input, and a recorded Element deleted mid-recording. Runs at 1 and 2 nodes."""
import numpy as np
import pytest

import antler

h5py = pytest.importorskip("h5py")

N = 7  # odd: two nodes hold 4 and 3


def _model(path, steps=23, flush=5):
    antler.Neutral("/a")
    n = antler.vec(antler.IntFire("/a/n", N))
    n.initVm = 1.0 + np.arange(N) * 0.25
    n.tau, n.thresh = 0.05, 1e9
    pg = antler.PulseGen("/pg")
    pg.level[0], pg.width[0], pg.delay[0] = 2.5, 3e-3, 4e-3
    h = antler.HDF5DataWriter("/h")
    h.filename = str(path)
    h.flushLimit = flush
    h.chunkSize = 3
    antler.connect(h, "requestOut", n, "getVm", "Reduce")
    antler.connect(h, "requestOut", pg, "getOutputValue")  # Single, MOOSE's default
    for t in (0, 1):
        antler.setClock(t, 1e-3)
    antler.useClock(0, "/a/n,/pg")
    antler.useClock(1, "/h")
    return n, pg, h


def _expected(steps):
    """Vm of the IntFires after each step: without input, Vm *= 1 - dt / tau (the same
    expression, in the same order, as IntFire's process)."""
    dt = antler.element("/clock").tickDt[0]
    decay = 1.0 - dt / 0.05
    vm = 1.0 + np.arange(N) * 0.25
    out = []
    for _ in range(steps):
        vm = vm * decay
        out.append(vm)
    return np.array(out).T


def test_every_object_every_step_with_moose_s_names(model, tmp_path):
    path = tmp_path / "rec.h5"
    n, pg, h = _model(path)
    pg_tab = antler.Table("/pgtab")
    antler.connect(pg_tab, "requestOut", pg, "getOutputValue")
    antler.useClock(1, "/pgtab")
    antler.reinit()
    assert h.isOpen and h.steps == 0  # no sample at reinit (MOOSE samples in process only)
    antler.start(23e-3)
    assert h.steps == 23
    h.close()
    assert not h.isOpen
    with h5py.File(path, "r") as f:
        names = []
        f.visititems(lambda k, o: names.append(k) if isinstance(o, h5py.Dataset) else None)
        assert sorted(names) == sorted(["a[0]/n[%d]/vm" % i for i in range(N)] +
                                       ["pg[0]/outputValue"])
        expected = _expected(23)
        for i in range(N):
            d = f["a[0]/n[%d]/vm" % i]
            assert d.shape == (23,) and d.chunks == (3,) and d.compression == "gzip"
            np.testing.assert_array_equal(d[()], expected[i])
        # The PulseGen's values are what a Table on the same tick records (its sample at
        # reinit aside).
        np.testing.assert_array_equal(f["pg[0]/outputValue"][()], np.asarray(pg_tab.vector)[1:])
        assert 2.5 in f["pg[0]/outputValue"][()]


def test_attributes_of_every_kind(model, tmp_path):
    path = tmp_path / "attrs.h5"
    n, pg, h = _model(path)
    h.compressor = "none"
    antler.reinit()
    h.stringAttr["note"] = "a test"
    h.doubleAttr["temperature"] = 34.5
    h.longAttr["count"] = -8640
    h.stringVecAttr["/a[0]/n[2]/vm/words"] = ["I wonder", "why"]
    h.doubleVecAttr["/a[0]/n[2]/dvec"] = [3.141592, 2.71828]
    h.longVecAttr["/extra/lvec"] = [3, 14, 1592]
    assert h.longAttr["count"] == -8640 and list(h.longVecAttr["/extra/lvec"]) == [3, 14, 1592]
    antler.start(2e-3)
    h.close()
    with pytest.raises(antler.IndexError):
        h.doubleAttr["temperature"]  # written at close, then forgotten (MOOSE's)
    with h5py.File(path, "r") as f:
        def text(x):
            return x.decode() if isinstance(x, bytes) else x
        assert text(f.attrs["note"]) == "a test"
        assert f.attrs["temperature"] == 34.5 and f.attrs["count"] == -8640
        assert [text(x) for x in f["a[0]/n[2]/vm"].attrs["words"]] == ["I wonder", "why"]
        assert list(f["a[0]/n[2]"].attrs["dvec"]) == [3.141592, 2.71828]
        assert list(f["extra"].attrs["lvec"]) == [3, 14, 1592]
        assert f["a[0]/n[0]/vm"].compression is None


def test_modes(model, tmp_path):
    path = tmp_path / "modes.h5"
    path.write_bytes(b"not hdf5")
    n, pg, h = _model(path)
    assert h.mode == 4
    with pytest.raises(antler.ValueError, match="exists"):
        antler.reinit()  # mode 4 refuses an existing file, which stays as it was
    assert path.read_bytes() == b"not hdf5" and not h.isOpen
    h.mode = 2  # replace
    antler.reinit()
    antler.start(4e-3)
    h.close()
    h.mode = 1  # append: the datasets grow, the next run's values after the first's
    antler.reinit()
    antler.start(3e-3)
    h.close()
    with h5py.File(path, "r") as f:
        vm = f["a[0]/n[3]/vm"][()]
    e = _expected(4)[3]
    np.testing.assert_array_equal(vm, np.concatenate([e, e[:3]]))


def test_bad_input_is_refused_and_changes_nothing(model, tmp_path):
    n, pg, h = _model(tmp_path / "bad.h5")
    for field, value, err in (("compressor", "lz4", antler.ValueError),
                              ("compression", 10, antler.ValueError),
                              ("chunkSize", 0, antler.ValueError),
                              ("flushLimit", 0, antler.ValueError),
                              ("mode", 3, antler.ValueError),
                              ("filename", "a\0b", antler.ValueError),
                              ("filename", "", antler.ValueError)):
        before = getattr(h, field)
        with pytest.raises(err, match=field):
            setattr(h, field, value)
        assert getattr(h, field) == before
    with pytest.raises(antler.ValueError):
        h.stringAttr["trailing/"] = "x"
    with pytest.raises(antler.TypeError):
        antler.connect(h, "requestOut", antler.TimeTable("/tt"), "getVector")  # not a number
    antler.connect(h, "requestOut", n[2], "getVm")  # n[2].Vm again: also in the Reduce message
    with pytest.raises(antler.ValueError, match=r"/a\[0\]/n\[2\]/vm twice"):
        antler.reinit()
    assert not h.isOpen


def test_a_deleted_element_reads_nan_and_the_rest_goes_on(model, tmp_path):
    path = tmp_path / "deleted.h5"
    n, pg, h = _model(path, flush=2)
    antler.reinit()
    antler.start(3e-3)
    antler.delete("/a/n")
    antler.start(2e-3)
    assert h.steps == 5
    h.close()
    with h5py.File(path, "r") as f:
        vm = f["a[0]/n[1]/vm"][()]
        assert f["pg[0]/outputValue"].shape == (5,)
    np.testing.assert_array_equal(vm[:3], _expected(3)[1])
    assert np.isnan(vm[3:]).all()
