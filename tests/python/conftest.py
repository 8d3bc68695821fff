# pytest runs on every rank under mpirun: `import antler` makes ranks > 0 serve rank 0's commands
# (they never get past the import), so the tests below are written as if serial.
import faulthandler
import os
import sys

import pytest

import antler


# A hang must fail fast and say where: each test gets ANTLER_TEST_CASE_TIMEOUT seconds (default
# 120; 0 turns it off). Past that, faulthandler prints every thread's traceback (the test's frame
# among them) and exits with status 1, and mpirun then ends the other ranks. It runs on its own C
# thread, so it fires even while the test is blocked in antler's C++ holding the GIL.
_CASE_TIMEOUT = float(os.environ.get("ANTLER_TEST_CASE_TIMEOUT", "120"))
_stderr = None


def _uncaptured_stderr(config):
    """stderr as it was before pytest captured it: what faulthandler writes must not vanish with
    the capture when it ends the process."""
    global _stderr
    if _stderr is None:
        try:
            capman = config.pluginmanager.getplugin("capturemanager")
            fd = capman._global_capturing.err.targetfd_save  # pytest internals: fall back below
            _stderr = os.fdopen(os.dup(fd), "w")
        except Exception:
            _stderr = sys.stderr
    return _stderr


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _CASE_TIMEOUT > 0:
        err = _uncaptured_stderr(item.config)
        faulthandler.dump_traceback_later(_CASE_TIMEOUT, exit=True, file=err)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def pytest_sessionfinish(session, exitstatus):
    # The worker ranks exit with the driver's result.
    antler._set_exit_code(int(exitstatus))


@pytest.fixture(scope="session")
def user_classes():
    """The doctest suite's test classes (TestAdder, TestReceiver, ...), loaded as a user library."""
    path = os.environ.get("ANTLER_TEST_CLASSES")
    if not path:
        pytest.skip("ANTLER_TEST_CLASSES is not set (run through ctest)")
    if not hasattr(antler, "TestAdder"):
        antler.loadLibrary(path)
    return path


@pytest.fixture
def model():
    """An empty model before and after each test."""
    antler._clearModel()
    antler.setNumThreads(2)
    yield antler
    antler._clearModel()
