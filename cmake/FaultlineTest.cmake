# faultline_add_test(NAME [EACH_CASE] SOURCES a_test.cc ... LIBS lib ...)
# Adds a GoogleTest executable that ctest runs; only when FAULTLINE_TESTS is on.
# EACH_CASE: every test case is its own ctest entry (NAME.Suite.Case), so a
# long program (one that runs the binary hundreds of times) spreads over
# `ctest -j` and each case has its own time limit; `ctest -R NAME` runs all.
function(faultline_add_test name)
  if(NOT FAULTLINE_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "EACH_CASE" "" "SOURCES;LIBS" ${ARGN})
  find_package(GTest REQUIRED)
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    FAULTLINE_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    FAULTLINE_BINARY="${CMAKE_BINARY_DIR}/faultline")
  if(ARG_EACH_CASE)
    include(GoogleTest)
    gtest_discover_tests(${name} TEST_PREFIX "${name}." DISCOVERY_MODE PRE_TEST
      PROPERTIES ENVIRONMENT "NO_COLOR=1" TIMEOUT 300)
  else()
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "NO_COLOR=1" TIMEOUT 600)
  endif()
endfunction()
