# faultline_add_test(NAME SOURCES a_test.cc ... LIBS lib ...)
# Adds a GoogleTest executable that ctest runs; only when FAULTLINE_TESTS is on.
function(faultline_add_test name)
  if(NOT FAULTLINE_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  find_package(GTest REQUIRED)
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    FAULTLINE_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    FAULTLINE_BINARY="${CMAKE_BINARY_DIR}/faultline")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "NO_COLOR=1" TIMEOUT 600)
endfunction()
