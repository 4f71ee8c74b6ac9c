// Mixture-of-experts routing steps shared by the architectures (arch/) and the CPU backend.
#pragma once

#include "backend/ops/backend.h"

#include <cstdint>

namespace verdict::cpu {

// Indices of the k largest of v[0..n), best first, lowest index first among equals (every MoE
// router's top-k).
void topKIndices(const float* v, int64_t n, int64_t k, int32_t* out);

// Mixtral-style routing of one token (llama.cpp build_moe_ffn, softmax gating, weights
// renormalised): logits[0..n) become softmax probabilities in place, experts[0..k) the top k of
// them (topKIndices), weights[slot] = probs[experts[slot]] / their sum (summed in double).
void routeSoftmaxTopKRow(float* logits, int64_t n, int64_t k, int32_t* experts, float* weights);

// gpt-oss's routing of one token (llama.cpp's LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT):
// experts[0..k) the top k of logits[0..n) (topKIndices), weights their softmax over those k alone.
void routeTopKSoftmaxRow(const float* logits, int64_t n, int64_t k, int32_t* experts, float* weights);

// backend::GroupedRouting of one token: scores[0..n) logits in, scores out; selection[0..n) what
// the top-k ranked; experts / weights [k].
void routeGroupedRow(const backend::GroupedRouting& r, float* scores, int64_t n, int64_t k, float* selection,
                     int32_t* experts, float* weights);

}  // namespace verdict::cpu
