// The host half of grouping a pass's (token, slot) pairs by expert (the op backend's routed products
// of a prefill): a counting sort of the pairs by their expert ids. Host code only.
#pragma once

#include <cstdint>
#include <vector>

namespace verdict::cuda {

// order = the pairs 0 .. ids.size() in expert order (pair order within an expert); begin[e] = the
// first place of expert e in it, begin[nExpert] = the pair count. False (nothing written) when an
// id lies outside [0, nExpert); badId then holds it.
inline bool sortPairsByExpert(const std::vector<int32_t>& ids, int64_t nExpert, std::vector<int64_t>& begin,
                              std::vector<int32_t>& order, int32_t& badId) {
    for (int32_t e : ids)
        if (e < 0 || e >= nExpert) {
            badId = e;
            return false;
        }
    begin.assign(static_cast<size_t>(nExpert + 1), 0);
    for (int32_t e : ids) ++begin[static_cast<size_t>(e) + 1];
    for (int64_t e = 0; e < nExpert; ++e) begin[static_cast<size_t>(e) + 1] += begin[static_cast<size_t>(e)];
    order.resize(ids.size());
    std::vector<int64_t> next(begin.begin(), begin.end() - 1);
    for (size_t p = 0; p < ids.size(); ++p)
        order[static_cast<size_t>(next[static_cast<size_t>(ids[p])]++)] = static_cast<int32_t>(p);
    return true;
}

}  // namespace verdict::cuda
