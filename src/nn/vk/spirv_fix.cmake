# cmake -DIN=raw.spv -DOUT=final.spv -DDIS=spirv-dis -DAS=spirv-as -DVAL=spirv-val -P spirv_fix.cmake
#
# Completes a module glslc compiled from src/nn/vk/shaders and validates it.
# Shaders declare RoundingModeRTE 32 themselves (common.glsl, through
# GL_EXT_spirv_intrinsics), but glslang keeps one execution mode per mode id,
# so a second spirv_execution_mode for width 64 would replace the first. A
# module that computes in double (div_rn's candidate, musl's expf) gets its
# RoundingModeRTE 64 here, in the disassembly, which spirv-as reassembles;
# spirv-val then checks the result for Vulkan 1.3.
execute_process(COMMAND ${DIS} ${IN} OUTPUT_VARIABLE text ERROR_VARIABLE errs RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "spirv-dis ${IN}: ${errs}")
endif()
string(REGEX MATCH "OpExecutionMode (%[A-Za-z0-9_]+) RoundingModeRTE 32" rte "${text}")
if(NOT rte)
  message(FATAL_ERROR "${IN}: no RoundingModeRTE 32 (every shader includes common.glsl)")
endif()
set(entry ${CMAKE_MATCH_1})
if(text MATCHES "OpCapability Float64")
  string(REPLACE "${rte}" "${rte}\n               OpExecutionMode ${entry} RoundingModeRTE 64" text
                 "${text}")
endif()
file(WRITE ${OUT}.s "${text}")
execute_process(COMMAND ${AS} --target-env vulkan1.3 ${OUT}.s -o ${OUT}.tmp
                ERROR_VARIABLE errs RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "spirv-as ${OUT}.s: ${errs}")
endif()
execute_process(COMMAND ${VAL} --target-env vulkan1.3 ${OUT}.tmp
                OUTPUT_VARIABLE out ERROR_VARIABLE errs RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "spirv-val ${OUT}: ${out}${errs}")
endif()
file(REMOVE ${OUT}.s)
file(RENAME ${OUT}.tmp ${OUT})
