# ctest helper: runs TOOL with ARGS (a ;-list) and passes only when it exits
# 0 and stdout matches REGEX (and stderr matches ERR_REGEX when given):
# unlike PASS_REGULAR_EXPRESSION, the exit code is checked too.
execute_process(COMMAND ${TOOL} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit code ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT out MATCHES "${REGEX}")
  message(FATAL_ERROR "stdout does not match '${REGEX}':\n${out}\nstderr: ${err}")
endif()
if(DEFINED ERR_REGEX AND NOT err MATCHES "${ERR_REGEX}")
  message(FATAL_ERROR "stderr does not match '${ERR_REGEX}':\n${err}")
endif()
message(STATUS "exit 0; stderr: ${err}")
