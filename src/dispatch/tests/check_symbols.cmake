# ctest: each level's object of logratio::dispatch exports exactly its entry
# point (everything else local: no inline function or template compiled
# with one level's flags can be merged with another level's or the
# consumer's copy). Run: cmake -DNM=nm -DDIR=<build/src/dispatch> -P check_symbols.cmake
foreach(level scalar sse2 avx2 avx512)
  set(obj ${DIR}/logratio_dispatch_${level}.o)
  execute_process(COMMAND ${NM} -g --defined-only ${obj} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${obj}")
  endif()
  string(REGEX REPLACE "[0-9a-f]+ [A-Za-z] " "" names "${out}")
  string(STRIP "${names}" names)
  if(NOT names STREQUAL "logratio_dispatch_table_${level}")
    message(FATAL_ERROR "${level}: global symbols other than the entry point:\n${names}")
  endif()
  execute_process(COMMAND ${NM} ${obj} OUTPUT_VARIABLE all)
  string(REGEX MATCHALL "\n[0-9a-f]+ [WVu] [^\n]+" weak "${all}")
  if(weak)
    message(FATAL_ERROR "${level}: weak or unique symbols left (would merge across levels):${weak}")
  endif()
endforeach()
message(STATUS "every level exports only its entry point")
