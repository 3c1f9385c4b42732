# ctest helper: rewrites tests/data/trackers/binary with
# tests/trackers/binary_writers.py into OUT and compares every file with the
# committed one (the writers are deterministic), so the committed bytes are
# what the script in the repo makes.
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${PYTHON} ${SCRIPT} ${OUT} RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "binary_writers.py failed: ${rc}")
endif()
file(GLOB_RECURSE ref RELATIVE ${REF} LIST_DIRECTORIES false ${REF}/*)
file(GLOB_RECURSE got RELATIVE ${OUT} LIST_DIRECTORIES false ${OUT}/*)
list(LENGTH ref nref)
list(LENGTH got ngot)
if(NOT nref EQUAL ngot OR nref EQUAL 0)
  message(FATAL_ERROR "${ngot} files regenerated, ${nref} committed")
endif()
foreach(f IN LISTS ref)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/${f} ${REF}/${f} RESULT_VARIABLE diff)
  if(NOT diff EQUAL 0)
    message(FATAL_ERROR "${f} differs from the committed file")
  endif()
endforeach()
message(STATUS "${nref} files identical")
