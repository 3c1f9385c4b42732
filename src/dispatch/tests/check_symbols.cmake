# ctest: each level's object of logratio::dispatch exports only its entry
# point (the SSE2 object: its own and the one-lane level's): no inline function or template compiled with
# one level's flags can be merged with another level's or the consumer's
# copy. Allowed besides: weak data objects ('V', 'u': function-local statics
# of inline functions, inline variables), which hold the same data at every
# level and must exist once per process anyway.
# Run: cmake -DNM=nm -DDIR=<build>/src/dispatch -P check_symbols.cmake
# The SSE2 level's object also holds the one-lane level's entry point.
foreach(level sse2 avx2 avx512)
  set(obj ${DIR}/logratio_dispatch_${level}.o)
  set(entries "logratio_dispatch_table_${level}")
  if(level STREQUAL "sse2")
    list(APPEND entries logratio_dispatch_table_scalar)
  endif()
  execute_process(COMMAND ${NM} -g --defined-only ${obj} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${obj}")
  endif()
  string(REGEX MATCHALL "[0-9a-f]+ [A-UWXYZa-tw-z] [^\n]+" exported "${out}")  # all but data 'V', 'v', 'u'
  list(LENGTH exported n)
  list(LENGTH entries want)
  set(found 0)
  foreach(e IN LISTS entries)
    foreach(x IN LISTS exported)
      if(x MATCHES " [TW] ${e}$")
        math(EXPR found "${found} + 1")
      endif()
    endforeach()
  endforeach()
  if(NOT n EQUAL want OR NOT found EQUAL want)
    message(FATAL_ERROR "${level}: global symbols other than the entry points (${entries}):\n${exported}")
  endif()
endforeach()
message(STATUS "every level object exports only its entry point")
