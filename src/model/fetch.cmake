# fetch.cmake - link dependencies of the model-management files in src/model
# (manifest.c: jansson; fetch.c: libcurl; sha256.c: OpenSSL libcrypto;
# verify.c: fy_text for the SentencePiece loader).
#
# Include once from src/model/CMakeLists.txt after fy_module(model ...):
#   include(${CMAKE_CURRENT_SOURCE_DIR}/fetch.cmake)
# Including it again (tests/modelmgmt does, so the tree links before the
# lead adds the line) is a no-op.
get_property(fy_model_fetch_linked GLOBAL PROPERTY FY_MODEL_FETCH_LINKED)
if(fy_model_fetch_linked)
  return()
endif()
set_property(GLOBAL PROPERTY FY_MODEL_FETCH_LINKED TRUE)

# GLOBAL imported targets, so the include may come from any directory.
set(CMAKE_FIND_PACKAGE_TARGETS_GLOBAL ON)
find_package(CURL REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(PkgConfig REQUIRED)
pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET GLOBAL jansson)
unset(CMAKE_FIND_PACKAGE_TARGETS_GLOBAL)

get_target_property(fy_model_type fy_model TYPE)
if(fy_model_type STREQUAL "INTERFACE_LIBRARY")
  target_link_libraries(fy_model INTERFACE CURL::libcurl OpenSSL::Crypto PkgConfig::JANSSON fy_text)
else()
  target_link_libraries(fy_model PUBLIC CURL::libcurl OpenSSL::Crypto PkgConfig::JANSSON fy_text)
endif()
