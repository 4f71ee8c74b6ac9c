#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace verdict::sampling {

namespace {
bool higher(const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}
}  // namespace

int32_t argmax(const float* logits, int64_t n) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i)
        if (logits[i] > logits[best]) best = i;
    return static_cast<int32_t>(best);
}

void applyPenalties(std::vector<Candidate>& c, std::span<const int32_t> recent, float repeat, float frequency,
                    float presence) {
    if (recent.empty()) return;
    std::unordered_map<int32_t, int> counts;
    for (int32_t t : recent) ++counts[t];
    for (Candidate& x : c) {
        auto it = counts.find(x.id);
        if (it == counts.end()) continue;
        const int n = it->second;
        if (x.logit <= 0.0f)
            x.logit *= repeat;
        else
            x.logit /= repeat;
        x.logit -= static_cast<float>(n) * frequency + (n > 0 ? 1.0f : 0.0f) * presence;
    }
}

void topK(std::vector<Candidate>& c, int32_t k) {
    if (k <= 0 || k >= static_cast<int32_t>(c.size())) {
        std::sort(c.begin(), c.end(), higher);
        return;
    }
    std::partial_sort(c.begin(), c.begin() + k, c.end(), higher);
    c.resize(static_cast<size_t>(k));
}

void softmax(std::vector<Candidate>& c, bool sort) {
    if (c.empty()) return;
    if (sort) std::sort(c.begin(), c.end(), higher);
    float maxv = c[0].logit;
    for (const Candidate& x : c) maxv = std::max(maxv, x.logit);
    double sum = 0.0;
    for (Candidate& x : c) {
        x.p = std::exp(x.logit - maxv);
        sum += x.p;
    }
    for (Candidate& x : c) x.p = static_cast<float>(x.p / sum);
}

void topP(std::vector<Candidate>& c, float p) {
    if (p >= 1.0f || c.empty()) return;
    softmax(c, true);
    double cum = 0.0;
    size_t keep = c.size();
    for (size_t i = 0; i < c.size(); ++i) {
        cum += c[i].p;
        if (cum >= p) {
            keep = i + 1;
            break;
        }
    }
    c.resize(std::max<size_t>(keep, 1));
}

void minP(std::vector<Candidate>& c, float minP) {
    if (minP <= 0.0f || c.empty()) return;
    float maxv = c[0].logit;
    for (const Candidate& x : c) maxv = std::max(maxv, x.logit);
    const float threshold = maxv + std::log(minP);
    auto it = std::remove_if(c.begin(), c.end(), [threshold](const Candidate& x) { return x.logit < threshold; });
    c.erase(it, c.end());
}

void temperature(std::vector<Candidate>& c, float t) {
    for (Candidate& x : c) x.logit /= t;
}

Sampler::Sampler(const SamplingParams& params) : m_params(params), m_rng(params.seed) {}

void Sampler::accept(int32_t token) { m_history.push_back(token); }

bool Sampler::penaltiesActive() const {
    return m_params.penaltyLastN != 0
        && (m_params.repeatPenalty != 1.0f || m_params.frequencyPenalty != 0.0f || m_params.presencePenalty != 0.0f);
}

std::span<const int32_t> Sampler::recent() const {
    std::span<const int32_t> all(m_history);
    if (m_params.penaltyLastN < 0 || static_cast<size_t>(m_params.penaltyLastN) >= all.size()) return all;
    return all.subspan(all.size() - static_cast<size_t>(m_params.penaltyLastN));
}

double Sampler::uniform() {
    // 53 random bits -> [0, 1); independent of the standard library's distributions, so the
    // same seed gives the same draws on every platform.
    return static_cast<double>(m_rng() >> 11) * (1.0 / 9007199254740992.0);
}

int32_t Sampler::sample(std::span<const float> logits) {
    const auto n = static_cast<int64_t>(logits.size());
    if (!penaltiesActive() && m_params.temperature <= 0.0f) return argmax(logits.data(), n);

    m_cand.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) m_cand[static_cast<size_t>(i)] = {static_cast<int32_t>(i), logits[static_cast<size_t>(i)], 0.0f};
    if (penaltiesActive())
        applyPenalties(m_cand, recent(), m_params.repeatPenalty, m_params.frequencyPenalty, m_params.presencePenalty);
    if (m_params.temperature <= 0.0f) {
        const auto best = std::min_element(m_cand.begin(), m_cand.end(), higher);
        return best->id;
    }
    topK(m_cand, m_params.topK);  // also sorts
    topP(m_cand, m_params.topP);
    minP(m_cand, m_params.minP);
    temperature(m_cand, m_params.temperature);
    softmax(m_cand, false);
    const double u = uniform();
    double cum = 0.0;
    for (const Candidate& x : m_cand) {
        cum += x.p;
        if (u < cum) return x.id;
    }
    return m_cand.back().id;
}

}  // namespace verdict::sampling
