# fy_module(NAME [DEPS lib...])
# Builds every .c file in the current source directory into the static
# library fy_NAME, which sees src/ as its include root.
function(fy_module name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.c ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  add_library(fy_${name} STATIC ${sources})
  target_include_directories(fy_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(fy_${name} PUBLIC ${ARG_DEPS})
endfunction()

# fy_test(NAME SOURCES src... LIBS lib... [LABELS label...])
# One C test executable registered with CTest; the test runs in the build dir
# with FANYI_SOURCE_DIR and FANYI_BIN pointing at the tree and the binary.
function(fy_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  add_test(NAME ${name} COMMAND ${name} ${ARG_ARGS})
  fy_test_env(${name} "${ARG_LABELS}" "${ARG_TIMEOUT}")
endfunction()

# fy_script_test(NAME COMMAND cmd... [LABELS ...] [TIMEOUT s])
# A test driven by a shell or Node script against the real `fanyi` binary.
function(fy_script_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "COMMAND;LABELS" ${ARGN})
  add_test(NAME ${name} COMMAND ${ARG_COMMAND})
  fy_test_env(${name} "${ARG_LABELS}" "${ARG_TIMEOUT}")
endfunction()

function(fy_test_env name labels timeout)
  if(NOT timeout)
    set(timeout 300)
  endif()
  set_tests_properties(${name} PROPERTIES
    TIMEOUT ${timeout}
    LABELS "${labels}"
    ENVIRONMENT "FANYI_SOURCE_DIR=${PROJECT_SOURCE_DIR};FANYI_BIN=$<TARGET_FILE:fanyi>;FANYI_BUILD_DIR=${PROJECT_BINARY_DIR};FANYI_SHARED_DIR=${PROJECT_SOURCE_DIR}/../shared")
endfunction()
