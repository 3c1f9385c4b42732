# ctest helper: an output that cannot be put in place (the target path is a
# directory, so the final rename fails after the data was written) gives a
# clear error and leaves no temporary file behind.
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
execute_process(COMMAND ${TOOL} correct ${IN} --is token --out ${DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "expected a failure")
endif()
if(NOT err MATCHES "cannot rename the temporary file over it")
  message(FATAL_ERROR "unexpected message: ${err}")
endif()
file(GLOB left ${DIR}.tmp.*)
if(left)
  message(FATAL_ERROR "temporary files left behind: ${left}")
endif()
if(NOT IS_DIRECTORY ${DIR})
  message(FATAL_ERROR "the target was replaced")
endif()
message(STATUS "ok: ${err}")
