# Script (cmake -P): writes the version header OUT from IN with the git commit of SRC as it is now,
# so `verdict bench`'s build_commit and the report's build line name the commit a binary was built
# from, not the one the build directory was configured at. "-dirty" is appended when tracked files
# differ from that commit; "unknown" outside a checkout. configure_file rewrites OUT only when its
# text changes, so a build without a new commit recompiles nothing.
execute_process(COMMAND git rev-parse --short HEAD WORKING_DIRECTORY "${SRC}"
  OUTPUT_VARIABLE VERDICT_BUILD_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR VERDICT_BUILD_COMMIT STREQUAL "")
  set(VERDICT_BUILD_COMMIT "unknown")
else()
  execute_process(COMMAND git diff-index --quiet HEAD -- WORKING_DIRECTORY "${SRC}" RESULT_VARIABLE dirty
    OUTPUT_QUIET ERROR_QUIET)
  if(dirty EQUAL 1)
    string(APPEND VERDICT_BUILD_COMMIT "-dirty")
  endif()
endif()
configure_file("${IN}" "${OUT}" @ONLY)
