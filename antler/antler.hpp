#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// antler's public C++ API in one include: what a program needs to declare element classes
/// (value, lookup, source, destination and reduce fields; process and reinit), to build models
/// through the Shell and to run them on any number of nodes and threads.
///
///   #include "antler/antler.hpp"
///   class Cell { ... ClassBuilder<Cell>("Cell", "...").value(...).proc<...>().build() ... };
///   int main(int argc, char** argv) {
///     antler::Runtime rt(argc, argv);      // every rank; the workers serve rank 0 from here
///     antler::Shell& s = rt.shell();       // rank 0 builds and runs as if serial
///     ...
///     return rt.finish(0);
///   }
///
/// A program may also make Simulations itself (several in one process, each on its own
/// communicator or on none); the Runtime is the usual way to make one on MPI's ranks.
///
/// Built-in reduce classes: ReduceSum, ReduceMin, ReduceMax (reduce/reduce_extremes.hpp),
/// ReduceStats (reduce/reduce_stats.hpp); built-in element classes (IntFire, Stats, Table, ...)
/// are created by name through the Shell. examples/minimal.cpp uses this include alone.
#include "core/class_builder.hpp"      // ClassBuilder, Cinfo, Eref, ObjId, ProcInfo, errors
#include "msg/src_finfo.hpp"           // SrcFinfo: message sources
#include "reduce/reduce_extremes.hpp"  // ReduceSum, ReduceMin, ReduceMax
#include "reduce/reduce_finfo.hpp"     // ReduceFinfo: reduce fields and their digests
#include "reduce/reduce_stats.hpp"     // ReduceStats
#include "shell/blocks.hpp"            // blocks::reduce / all_to_all over an Element's entries
#include "shell/field.hpp"             // Field<T>::get/set/getVec/setVec
#include "shell/runtime.hpp"           // Runtime: MPI and the driver/worker split
#include "shell/shell.hpp"             // Shell: create, connect, setClock, useClock, reinit, start
#include "shell/simulation.hpp"        // Simulation: one whole simulation (a Runtime makes one)
#pragma GCC visibility pop
