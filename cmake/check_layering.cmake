# Fails (the build, when run as the epctx_layering target) when a source file includes a module
# its own module may not use. Layers, lowest first: util, format, exec, compile, then loader and
# io side by side (neither includes the other: no load path reads tensor files). A module may
# include its own headers, the public headers (epctx/), the generated program schema and the
# modules below it; tools/ may include every module; src/capi/ and python/src/ only the public
# headers. Include paths are "module/...", relative to src/ (one include root serves every
# module, so the compiler alone cannot refuse an include against the direction; this does).
#
# Above compile/, exec/ is used through its own interface only: loader and io include nothing
# under exec/kernels/ (what they need of the kernel libraries as a whole is exec/kernel_runtime.h),
# so a kernel family can change without touching them.
#
# usage: cmake -DSOURCE_DIR=<repo> -P check_layering.cmake
cmake_minimum_required(VERSION 3.20)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layering.cmake: pass -DSOURCE_DIR=<repository root>")
endif()

set(layers util format exec compile loader io)
set(allowed_util util)
set(allowed_format util format)
set(allowed_exec util format exec)
set(allowed_compile util format exec compile)
set(allowed_loader util format exec compile loader)
set(allowed_io util format exec compile io)
set(allowed_capi capi)
set(allowed_tools util format exec compile loader io conformance perf)
set(allowed_python)
set(kernels_closed_to src/loader src/io)

# The first path component of every quoted include that names a folder.
function(included_modules file out)
  file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[A-Za-z0-9_]+/")
  set(result)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([A-Za-z0-9_]+)/.*$" "\\1" module "${line}")
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*(\"[^\"]*\").*$" "\\1" spelled "${line}")
    list(APPEND result "${module}|${spelled}")
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

set(violations)
function(check owner allowed)
  file(GLOB_RECURSE files "${SOURCE_DIR}/${owner}/*.h" "${SOURCE_DIR}/${owner}/*.cc")
  foreach(file IN LISTS files)
    included_modules("${file}" includes)
    foreach(entry IN LISTS includes)
      string(REPLACE "|" ";" parts "${entry}")
      list(GET parts 0 module)
      list(GET parts 1 spelled)
      if(module STREQUAL "epctx" OR module STREQUAL "generated")
        continue()
      endif()
      list(FIND allowed "${module}" found)
      list(FIND kernels_closed_to "${owner}" closed)
      if(found GREATER -1 AND closed GREATER -1 AND spelled MATCHES "^\"exec/kernels/")
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
        list(APPEND violations "${rel} includes ${spelled}: ${owner} may use exec/ only through its \
interface (exec/kernel_runtime.h for the kernel libraries), not exec/kernels/")
      elseif(found EQUAL -1)
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
        list(JOIN allowed ", " allowed_text)
        if(allowed_text STREQUAL "")
          set(rule "only the public epctx/ headers")
        else()
          set(rule "${allowed_text} and the public epctx/ headers")
        endif()
        list(APPEND violations "${rel} includes ${spelled}: ${owner} may include ${rule}")
      endif()
    endforeach()
  endforeach()
  set(violations "${violations}" PARENT_SCOPE)  # every one found, not only the owner's last
endfunction()

foreach(module IN LISTS layers)
  check("src/${module}" "${allowed_${module}}")
endforeach()
check("src/capi" "${allowed_capi}")
check("tools" "${allowed_tools}")
check("python/src" "${allowed_python}")

if(violations)
  list(LENGTH violations count)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "layering: ${count} include(s) against the module order "
                      "(util < format < exec < compile < {loader, io} < tools):\n  ${text}")
endif()
