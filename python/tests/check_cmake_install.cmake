# ctest: cmake --install --component python, then import from elsewhere.
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX} --component python RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed")
endif()
file(MAKE_DIRECTORY ${PREFIX}/cwd)
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PREFIX}/${DIR} ${PYTHON} -c
                "import logratio; assert logratio.__file__.startswith('${PREFIX}'), logratio.__file__; print(logratio.simd_level())"
                WORKING_DIRECTORY ${PREFIX}/cwd RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "import of the installed package failed: ${err}")
endif()
message(STATUS "installed package imports, SIMD level ${out}")
