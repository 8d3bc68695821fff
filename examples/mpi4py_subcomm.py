"""antler beside a program's own MPI work: the script uses mpi4py on MPI_COMM_WORLD, and runs an
antler model on a sub-communicator holding the first half of the ranks.

    mpirun -n 4 python3 examples/mpi4py_subcomm.py

Importing mpi4py before antler makes the script MPI-aware: antler waits for antler.init(comm).
On the sub-communicator's rank 0 init returns True and the model is built and run as if serial;
its other ranks serve inside init and return False once the driver calls antler.finalize(). Every
rank then goes on with its own MPI work (here an allreduce on MPI_COMM_WORLD), which never mixes
with antler's traffic: antler runs on a duplicate of the communicator it is given.
"""
from mpi4py import MPI  # before antler: this script chooses antler's communicator itself

import numpy as np

import antler

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
half = (size + 1) // 2
model_comm = world.Split(0 if rank < half else 1, rank)

report = None
if rank < half:
    if antler.init(model_comm):  # the driver of the model (world rank 0)
        n, dt, tau, steps = 1000, 1e-3, 0.02, 25
        cells = antler.IntFire("/cells", n)
        v = antler.vec(cells)
        vm0 = np.linspace(0.1, 0.9, n)
        v.Vm = vm0
        v.thresh = 10.0
        v.tau = tau
        stats = antler.Stats("/stats")
        antler.connect(stats, "reduce", cells, "getVm", "Reduce")
        antler.setClock(0, dt)
        antler.setClock(1, dt)
        antler.useClock(0, "/cells")
        antler.useClock(1, "/stats")
        antler.reinit()
        v.Vm = vm0  # reinit set Vm to initVm
        antler.start(steps * dt)
        want = vm0 * (1 - dt / tau) ** steps  # the closed form of IntFire's decay
        report = (antler.numNodes(), float(np.max(np.abs(v.Vm - want) / want)),
                  abs(stats.mean - want.mean()) / want.mean())
        antler.finalize()  # releases the other ranks of model_comm
else:
    # The other half does work of its own meanwhile, on its own communicator.
    model_comm.allreduce(rank)

# Every rank: MPI work on MPI_COMM_WORLD, after (and unaffected by) antler's.
total = world.allreduce(rank)
if rank == 0:
    nodes, err_vm, err_mean = report
    ok = total == size * (size - 1) // 2 and err_vm < 1e-12 and err_mean < 1e-12
    print("antler ran on %d of %d ranks: max relative error of Vm %.1e, of the Stats mean %.1e"
          % (nodes, size, err_vm, err_mean))
    print("mpi4py allreduce on MPI_COMM_WORLD: %d (expected %d)" % (total, size * (size - 1) // 2))
    print("result: %s" % ("ok" if ok else "MISMATCH"))
