# Writes a C++ source holding a file's bytes (run with cmake -P at build time, see app/CMakeLists.txt):
#   cmake -DINPUT=resources/hardware.json -DOUTPUT=.../hardware_catalog_data.cpp [-DSYMBOL=kHardwareJson] -P embed_json.cmake
# defines verdict::core::detail::<SYMBOL>Data[] and <SYMBOL>Size (default SYMBOL kHardwareJson).
# Bytes, not a string literal: any text embeds safely, whatever quotes or delimiters it holds.
if(NOT DEFINED SYMBOL)
  set(SYMBOL kHardwareJson)
endif()
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hexLength)
math(EXPR size "${hexLength} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT} by app/core/tco/embed_json.cmake. Do not edit.\n"
"#include <cstddef>\n"
"namespace verdict::core::detail {\n"
"extern const unsigned char ${SYMBOL}Data[];\n"
"extern const std::size_t ${SYMBOL}Size;\n"
"const unsigned char ${SYMBOL}Data[] = {\n${bytes}0x00};\n"
"const std::size_t ${SYMBOL}Size = ${size};\n"
"}  // namespace verdict::core::detail\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
