// Text that came from a file (a tensor name, a metadata key or value, a template) put into an
// error message: quoted, with every control character and invalid UTF-8 byte written as \xNN,
// and truncated, so a hostile file can neither inject terminal escapes nor flood the terminal.
//
//   quoteFileText("blk.0\x1b[2J")  -> 'blk.0\x1b[2J'  (the ESC byte as the four characters \x1b)
//   oneLine(message)               -> the whole message on one line, at most kMaxMessageBytes
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace verdict::util {

inline constexpr size_t kMaxQuotedBytes = 96;     // of the original text, per quoted piece
inline constexpr size_t kMaxMessageBytes = 2048;  // of one error line

// `text` between single quotes, escaped as above; longer than `maxBytes`: cut at a character
// boundary and followed by "... (N bytes)".
std::string quoteFileText(std::string_view text, size_t maxBytes = kMaxQuotedBytes);

// Escapes control characters (newlines included, as \n) and invalid UTF-8 of a whole message,
// and cuts it after `maxBytes` with "... (N bytes in all)": one line per error.
std::string oneLine(std::string_view message, size_t maxBytes = kMaxMessageBytes);

}  // namespace verdict::util
