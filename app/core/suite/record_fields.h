// Reading fields of one imported record (a JSON object) the way suite files spell them: names
// compared case-insensitively ("Question" == "question"), dotted paths ("question.stem"), and
// scalars accepted as text (a number 42 in an "answer" column reads as "42").
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core::fields {

// The member named `name` (exact match first, then ASCII case-insensitive), or nullptr.
const nlohmann::json* find(const nlohmann::json& obj, std::string_view name);
// First present member among `names`; `which` (optional) receives the key as written in the record.
const nlohmann::json* findAny(const nlohmann::json& obj, std::initializer_list<std::string_view> names,
                              std::string* which = nullptr);
// Dotted path ("question.stem", "metadata.level"); a plain name is a path of one step.
const nlohmann::json* findPath(const nlohmann::json& obj, std::string_view path);

// Non-const forms, so a caller that owns the record can move text out of it.
inline nlohmann::json* find(nlohmann::json& obj, std::string_view name) {
    return const_cast<nlohmann::json*>(find(static_cast<const nlohmann::json&>(obj), name));
}
inline nlohmann::json* findAny(nlohmann::json& obj, std::initializer_list<std::string_view> names, std::string* which = nullptr) {
    return const_cast<nlohmann::json*>(findAny(static_cast<const nlohmann::json&>(obj), names, which));
}

// Strings as they are, numbers and booleans as JSON writes them; null/objects/arrays -> nullopt.
std::optional<std::string> scalarText(const nlohmann::json& v);
// Like scalarText, but moves a string out of `v` (which is left an empty string).
std::optional<std::string> takeText(nlohmann::json& v);
// A string, or an array of scalars, as a list of texts (empty when the value is neither).
std::vector<std::string> textList(const nlohmann::json& v);

bool isBlank(std::string_view s);
std::string lowerAscii(std::string_view s);

// The record without the members whose names are in `used` (case-insensitive): what is left is
// kept as item metadata so nothing in the file is lost.
nlohmann::json rest(const nlohmann::json& obj, const std::vector<std::string>& used);

}  // namespace verdict::core::fields
