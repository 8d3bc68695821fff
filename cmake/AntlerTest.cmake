# antler_add_mpi_test(NAME name TARGET target RANKS 1 2 4 THREADS 1 2 [TIMEOUT s] [ARGS ...])
# Registers one ctest test per (ranks, threads) pair, each run under mpirun with the flags that
# make Open MPI run as root and oversubscribed on a small machine. Give TIMEOUT as a few times the
# measured run time (default 300 s), so that a hang costs minutes, not ten.
set(ANTLER_MPIEXEC_FLAGS --allow-run-as-root --oversubscribe --bind-to none CACHE STRING "mpirun flags for tests")
function(antler_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;TARGET;TIMEOUT" "RANKS;THREADS;ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  foreach(np IN LISTS T_RANKS)
    foreach(nt IN LISTS T_THREADS)
      set(name "${T_NAME}.np${np}.t${nt}")
      add_test(NAME ${name}
               COMMAND ${MPIEXEC_EXECUTABLE} ${ANTLER_MPIEXEC_FLAGS} ${MPIEXEC_NUMPROC_FLAG} ${np}
                       $<TARGET_FILE:${T_TARGET}> ${T_ARGS})
      # With one thread per rank by default, the cases that ask for more threads run them as the
      # clock sees fit (on fewer OS threads than threads when the ranks have fewer cores:
      # Clock::workers); with more, every thread gets an OS thread of its own, however few the
      # cores, so that the threads really run at once.
      set(env "OMP_NUM_THREADS=${nt}")
      if(nt GREATER 1)
        list(APPEND env "ANTLER_CORES_PER_RANK=1024")
      endif()
      set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}" TIMEOUT ${T_TIMEOUT}
                                              PROCESSORS ${np})
    endforeach()
  endforeach()
endfunction()
