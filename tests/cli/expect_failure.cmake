# ctest helper: runs TOOL with ARGS (a ;-list) and passes only when it exits
# non-zero, prints nothing on stdout, and stderr matches REGEX.
execute_process(COMMAND ${TOOL} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "expected a failure, got exit code 0\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "a failing run printed a result on stdout:\n${out}")
endif()
if(NOT err MATCHES "${REGEX}")
  message(FATAL_ERROR "stderr does not match '${REGEX}':\n${err}")
endif()
message(STATUS "exit ${rc}: ${err}")
