# pytest runs on every rank under mpirun: `import antler` makes ranks > 0 serve rank 0's commands
# (they never get past the import), so the tests below are written as if serial.
import os

import pytest

import antler


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
