# cmake/check_layering.cmake on a small tree with includes against the module order (each must be
# reported, with the rule, two of one module both; loader and io, side by side, may not include
# each other, nor exec's kernels) and with allowed ones (none reported), then on the repository.
# usage: cmake -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch folder> -P check_layering_test.cmake
cmake_minimum_required(VERSION 3.20)
set(tree "${WORK_DIR}/tree")
file(REMOVE_RECURSE "${tree}")
file(WRITE "${tree}/src/util/ok.cc" "#include \"util/file.h\"\n#include \"epctx/status.h\"\n")
file(WRITE "${tree}/src/format/up.h" "#include \"exec/kernel.h\"\n")
file(WRITE "${tree}/src/exec/ok.cc" "#include \"format/blob.h\"\n#include \"program_generated.h\"\n")
file(WRITE "${tree}/src/compile/up.cc" "#include \"util/file.h\"\n  #  include \"loader/session_impl.h\"\n")
file(WRITE "${tree}/src/loader/ok.cc" "#include \"compile/ir.h\"\n#include <vector>\n")
file(WRITE "${tree}/src/loader/up.cc" "#include \"io/tensor_parse.h\"\n")
file(WRITE "${tree}/src/io/ok.cc" "#include \"compile/onnx_tensor.h\"\n#include \"io/py_literal.h\"\n")
file(WRITE "${tree}/src/loader/kernel.cc" "#include \"exec/kernels/onednn/runtime.h\"\n")
file(WRITE "${tree}/src/loader/runtime.cc" "#include \"exec/kernel_runtime.h\"\n")
file(WRITE "${tree}/src/compile/pack.cc" "#include \"exec/kernels/onednn/weight_format.h\"\n")
file(WRITE "${tree}/src/io/up.cc" "#include \"loader/session_impl.h\"\n")
file(WRITE "${tree}/src/io/kernel.cc" "#include \"exec/kernels/shape.h\"\n")
file(WRITE "${tree}/src/capi/up.cc" "#include \"loader/session_impl.h\"\n")
file(WRITE "${tree}/tools/ok.cc" "#include \"loader/session_impl.h\"\n#include \"perf/cold.h\"\n")
file(WRITE "${tree}/python/src/up.cc" "#include \"util/file.h\"\n#include \"bindings.h\"\n")

function(run_check dir out_rc out_text)
  execute_process(COMMAND "${CMAKE_COMMAND}" -DSOURCE_DIR=${dir}
                          -P "${SOURCE_DIR}/cmake/check_layering.cmake"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_rc} "${rc}" PARENT_SCOPE)
  string(REGEX REPLACE "[ \t\r\n]+" " " text "${out}${err}")  # CMake wraps the message
  set(${out_text} "${text}" PARENT_SCOPE)
endfunction()

run_check("${tree}" rc text)
if(rc EQUAL 0)
  message(FATAL_ERROR "the tree with eight includes against the order passed: ${text}")
endif()
set(expected
  "layering: 8 include(s) against the module order (util < format < exec < compile < {loader, io} < tools):"
  "src/format/up.h includes \"exec/kernel.h\": src/format may include util, format and the public epctx/ headers"
  "src/compile/up.cc includes \"loader/session_impl.h\": src/compile may include util, format, exec, compile and the public epctx/ headers"
  "src/loader/up.cc includes \"io/tensor_parse.h\": src/loader may include util, format, exec, compile, loader and the public epctx/ headers"
  "src/io/up.cc includes \"loader/session_impl.h\": src/io may include util, format, exec, compile, io and the public epctx/ headers"
  "src/loader/kernel.cc includes \"exec/kernels/onednn/runtime.h\": src/loader may use exec/ only through its interface (exec/kernel_runtime.h for the kernel libraries), not exec/kernels/"
  "src/io/kernel.cc includes \"exec/kernels/shape.h\": src/io may use exec/ only through its interface (exec/kernel_runtime.h for the kernel libraries), not exec/kernels/"
  "src/capi/up.cc includes \"loader/session_impl.h\": src/capi may include capi and the public epctx/ headers"
  "python/src/up.cc includes \"util/file.h\": python/src may include only the public epctx/ headers")
foreach(line IN LISTS expected)
  string(FIND "${text}" "${line}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "missing from the report: '${line}'\nreport: ${text}")
  endif()
endforeach()
foreach(allowed "src/util/ok.cc" "src/exec/ok.cc" "src/loader/ok.cc" "src/loader/runtime.cc"
                "src/compile/pack.cc" "src/io/ok.cc" "tools/ok.cc")
  string(FIND "${text}" "${allowed}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "an allowed include of ${allowed} was reported: ${text}")
  endif()
endforeach()

run_check("${SOURCE_DIR}" rc text)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the repository breaks the module order: ${text}")
endif()
