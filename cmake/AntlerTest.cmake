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
      set_tests_properties(${name} PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=${nt}" TIMEOUT ${T_TIMEOUT}
                                              PROCESSORS ${np})
    endforeach()
  endforeach()
endfunction()
