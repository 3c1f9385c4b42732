# ctest: each level's object of logratio::dispatch exports exactly one
# function, its entry point: no inline function or template compiled with
# one level's flags can be merged with another level's or the consumer's
# copy. Allowed besides: weak data objects ('V', 'u': function-local statics
# of inline functions, inline variables), which hold the same data at every
# level and must exist once per process anyway.
# Run: cmake -DNM=nm -DDIR=<build>/src/dispatch -P check_symbols.cmake
foreach(level scalar sse2 avx2 avx512)
  set(obj ${DIR}/logratio_dispatch_${level}.o)
  execute_process(COMMAND ${NM} -g --defined-only ${obj} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${obj}")
  endif()
  string(REGEX MATCHALL "[0-9a-f]+ [A-UWXYZa-tw-z] [^\n]+" exported "${out}")  # all but data 'V', 'v', 'u'
  list(LENGTH exported n)
  if(NOT n EQUAL 1 OR NOT exported MATCHES " [TW] logratio_dispatch_table_${level}$")
    message(FATAL_ERROR "${level}: global symbols other than the entry point:\n${exported}")
  endif()
endforeach()
message(STATUS "every level object exports only its entry point")
