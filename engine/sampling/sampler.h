// Token sampling: the steps of llama.cpp's default sampler chain as separate functions over a
// candidate list, and a Sampler that runs them with a seeded generator.
//
// Chain (temperature > 0): penalties -> top-k -> top-p -> min-p -> temperature -> draw.
// temperature <= 0: penalties (when set) -> argmax, lowest id on ties.
// Semantics follow llama.cpp's src/llama-sampling.cpp (commit c392e509): e.g. the repetition
// penalty divides positive logits and multiplies negative ones; top-p keeps the smallest prefix of
// the sorted list whose probability mass reaches p; min-p keeps logits >= max + ln(min_p).
#pragma once

#include "verdict/engine/generate.h"

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace verdict::sampling {

struct Candidate {
    int32_t id;
    float logit;
    float p;  // probability after the last softmax (valid after steps that compute it)
};

// Index of the largest value; the lowest index wins ties. n >= 1.
int32_t argmax(const float* logits, int64_t n);

// Repetition / frequency / presence penalties for the tokens in `recent`.
void applyPenalties(std::vector<Candidate>& c, std::span<const int32_t> recent, float repeat, float frequency,
                    float presence);
// Sorts by logit, highest first (ties: lower id first), and keeps k (k <= 0: all).
void topK(std::vector<Candidate>& c, int32_t k);
// Softmax over the candidates (fills p); sorts first when `sort`.
void softmax(std::vector<Candidate>& c, bool sort);
// Keeps the smallest highest-probability prefix with mass >= p (at least one). p >= 1: no-op.
void topP(std::vector<Candidate>& c, float p);
// Keeps candidates with logit >= max + ln(minP) (probability >= minP * p_max). minP <= 0: no-op.
void minP(std::vector<Candidate>& c, float minP);
// Divides the logits by t (t > 0).
void temperature(std::vector<Candidate>& c, float t);

class Sampler {
public:
    explicit Sampler(const SamplingParams& params);

    // Adds a token to the penalty history (prompt tokens and generated tokens).
    void accept(int32_t token);

    // Picks the next token from a row of logits (not modified).
    int32_t sample(std::span<const float> logits);

    const SamplingParams& params() const { return m_params; }

private:
    bool penaltiesActive() const;
    std::span<const int32_t> recent() const;
    double uniform();  // [0, 1)

    SamplingParams m_params;
    std::mt19937_64 m_rng;
    std::vector<int32_t> m_history;
    std::vector<Candidate> m_cand;  // reused between calls
};

}  // namespace verdict::sampling
