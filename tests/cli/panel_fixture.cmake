# ctest helper: `logratio panel FIXTURE --json` must exit 0, print nothing on
# stderr, and its JSON must equal EXPECTED[LAYOUT] key for key within SPEC's
# tolerance (COMPARE = compare_panel_json).
execute_process(COMMAND ${TOOL} panel ${FIXTURE} --json RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "logratio panel failed (${rc}): ${err}")
endif()
if(NOT err STREQUAL "")
  message(FATAL_ERROR "logratio panel wrote to stderr: ${err}")
endif()
file(WRITE ${OUT} "${out}")
execute_process(COMMAND ${COMPARE} ${EXPECTED} ${LAYOUT} ${OUT} RESULT_VARIABLE rc OUTPUT_VARIABLE cout ERROR_VARIABLE cerr)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FIXTURE} against ${EXPECTED} [${LAYOUT}]:\n${cerr}")
endif()
message(STATUS "${cout}")
