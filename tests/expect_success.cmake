# ctest helper, the success twin of tests/cli/expect_failure.cmake: runs CMD
# (a ;-list: program and arguments) and passes only when it exits with code 0
# and, when REGEX is given, its stdout matches REGEX (and its stderr
# ERR_REGEX when given). (A test with
# PASS_REGULAR_EXPRESSION alone ignores the exit code; this checks both.)
#   cmake -DCMD=prog;arg;... [-DREGEX=...] [-DERR_REGEX=...] -P expect_success.cmake
if(NOT CMD)
  message(FATAL_ERROR "expect_success.cmake: no CMD")
endif()
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit code ${rc} (wanted 0) from: ${CMD}\nstdout: ${out}\nstderr: ${err}")
endif()
if(DEFINED REGEX AND NOT REGEX STREQUAL "" AND NOT out MATCHES "${REGEX}")
  message(FATAL_ERROR "stdout does not match '${REGEX}':\n${out}\nstderr: ${err}")
endif()
if(DEFINED ERR_REGEX AND NOT err MATCHES "${ERR_REGEX}")
  message(FATAL_ERROR "stderr does not match '${ERR_REGEX}':\n${err}")
endif()
message(STATUS "exit 0, output as expected")
