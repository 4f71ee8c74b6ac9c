# One place for compiler warnings: -Wall -Wextra on every target of the project.
function(verdict_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-missing-field-initializers>)
endfunction()
