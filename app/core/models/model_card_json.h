// The stable JSON shape of a model card (`verdict info --json`, documented in docs/cli.md).
#pragma once

#include "verdict/engine/model_card.h"

#include <nlohmann/json.hpp>

namespace verdict::core {

nlohmann::ordered_json modelCardToJson(const ModelCard& card);

// Human-readable multi-line card, as `verdict info` prints it and the Models screen shows it.
std::string modelCardToText(const ModelCard& card);

// "1.59 GiB", "457.6 MiB", "812 B".
std::string formatBytes(uint64_t bytes);
// "852.6 M", "7.24 B", "292.8 K".
std::string formatCount(uint64_t n);

}  // namespace verdict::core
