# Layers (docs/architecture.md, "Layers"): each library sees only the folders it may include.
# A folder is exposed through an include root of its own under the build tree, a directory that
# holds a link to that folder and nothing else (build/include-roots/<target>/<name> -> folder).
# A target's include path is its own roots plus the PUBLIC roots of what it links, so including a
# header of a layer it does not link ("cli/args.h" from core) fails to compile with "No such file
# or directory" — tests/layers checks that for every forbidden pair.
#
#   verdict_expose(verdict_core PUBLIC core=${CMAKE_SOURCE_DIR}/app/core)
function(verdict_expose target scope)
  set(root ${CMAKE_BINARY_DIR}/include-roots/${target})
  file(MAKE_DIRECTORY ${root})
  foreach(entry IN LISTS ARGN)
    string(FIND "${entry}" "=" eq)
    if(eq LESS 1)
      message(FATAL_ERROR "verdict_expose(${target}): '${entry}' is not NAME=FOLDER")
    endif()
    string(SUBSTRING "${entry}" 0 ${eq} name)
    math(EXPR from "${eq} + 1")
    string(SUBSTRING "${entry}" ${from} -1 dir)
    if(NOT IS_DIRECTORY "${dir}")
      message(FATAL_ERROR "verdict_expose(${target}): ${dir} is not a folder")
    endif()
    get_filename_component(parent ${root}/${name} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})  # a nested name ("backend/cpu") gets its parent folder
    file(REMOVE ${root}/${name})
    file(CREATE_LINK ${dir} ${root}/${name} SYMBOLIC)
  endforeach()
  target_include_directories(${target} ${scope} ${root})
endfunction()
