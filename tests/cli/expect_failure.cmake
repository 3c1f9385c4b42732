# ctest helper: runs TOOL with ARGS (a ;-list) and passes only when it exits
# with the CLI's error code (1, or RC when given: the README's one exit-code
# rule), prints nothing on stdout, and stderr matches REGEX.
execute_process(COMMAND ${TOOL} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT DEFINED RC)
  set(RC 1)
endif()
if(NOT rc EQUAL RC)
  message(FATAL_ERROR "expected exit code ${RC}, got ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "a failing run printed a result on stdout:\n${out}")
endif()
if(NOT err MATCHES "${REGEX}")
  message(FATAL_ERROR "stderr does not match '${REGEX}':\n${err}")
endif()
message(STATUS "exit ${rc}: ${err}")
