# FANYI_VULKAN: the Vulkan compute foundation in src/nn/vk (library fy_nn_vk).
#   AUTO (default): on when the Vulkan headers (1.3), glslc and spirv-tools
#                   (spirv-val, spirv-dis, spirv-as) are all found;
#   ON:  the same, but a missing piece stops the configuration;
#   OFF: no Vulkan code at all.
# The binary only uses the headers: libvulkan.so.1 is opened at run time, so
# one build runs on machines with and without a Vulkan loader or GPU.
# Sets FANYI_HAVE_VULKAN and, for src/nn/vk and tests/gpu, the tool paths
# FANYI_GLSLC, FANYI_SPIRV_VAL, FANYI_SPIRV_DIS, FANYI_SPIRV_AS.
set(FANYI_VULKAN AUTO CACHE STRING "Vulkan compute backend: AUTO, ON or OFF")
set_property(CACHE FANYI_VULKAN PROPERTY STRINGS AUTO ON OFF)

set(FANYI_HAVE_VULKAN OFF)
if(NOT FANYI_VULKAN STREQUAL "OFF")
  find_package(Vulkan 1.3 QUIET COMPONENTS glslc)
  find_program(FANYI_SPIRV_VAL spirv-val)
  find_program(FANYI_SPIRV_DIS spirv-dis)
  find_program(FANYI_SPIRV_AS spirv-as)
  set(missing)
  if(NOT Vulkan_FOUND OR NOT TARGET Vulkan::Headers)
    list(APPEND missing "Vulkan 1.3 headers (libvulkan-dev)")
  endif()
  if(NOT Vulkan_GLSLC_EXECUTABLE)
    list(APPEND missing "glslc")
  endif()
  foreach(tool FANYI_SPIRV_VAL FANYI_SPIRV_DIS FANYI_SPIRV_AS)
    if(NOT ${tool})
      list(APPEND missing "${tool} (spirv-tools)")
    endif()
  endforeach()
  if(missing)
    if(FANYI_VULKAN STREQUAL "ON")
      message(FATAL_ERROR "FANYI_VULKAN=ON but missing: ${missing}")
    endif()
    message(STATUS "Vulkan backend: off (missing: ${missing})")
  else()
    set(FANYI_HAVE_VULKAN ON)
    set(FANYI_GLSLC ${Vulkan_GLSLC_EXECUTABLE})
    message(STATUS "Vulkan backend: on (glslc ${FANYI_GLSLC})")
  endif()
endif()
