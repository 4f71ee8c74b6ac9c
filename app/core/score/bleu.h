// BLEU as sacreBLEU computes it (Post 2018; sacrebleu/metrics/bleu.py, version 2):
//
//   p_n  = 100 * clipped n-gram matches / hypothesis n-grams, n = 1..4 (clipped by the maximum
//          count of the n-gram in any single reference)
//   smoothing "exp" (sacreBLEU's default, from mteval-v13a): each order with zero matches gets
//          p_n = 100 / (2^k * total_n), k = 1, 2, ... counting those zero orders in turn
//   an order with no hypothesis n-grams at all ends the loop; effective order (sentence BLEU)
//          averages only the orders up to there, plain corpus BLEU keeps all 4 (log 0 -> ~0)
//   BP   = 1 if hyp_len >= ref_len else exp(1 - ref_len / hyp_len); ref_len per sentence is the
//          reference length closest to the hypothesis length (the shorter one on ties)
//   BLEU = BP * exp(mean(log p_n))  on a 0-100 scale.
//
// sentenceBleu = sacrebleu.sentence_bleu (exp smoothing, effective order); corpusBleu =
// sacrebleu.corpus_bleu (exp smoothing, no effective order), statistics summed over sentences.
//
// Tokenization: sacreBLEU's "13a" (mteval-v13a: punctuation split off, '.' and ',' kept inside
// numbers, '-' split after a digit), with every CJK character (Han, kana, Hangul, CJK and
// full-width punctuation) made a token of its own first, like sacreBLEU's "zh" tokenizer does for
// Chinese. No lower-casing (sacreBLEU's default).
//
// The "bleu" scorer: score = sentenceBleu / 100 against the references (params
// value/values/reference, else the item's), pass = score >= threshold (default 0.5, promptfoo's).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

std::vector<std::string> bleuTokens(std::string_view text);

struct BleuStats {
    std::array<double, 4> correct{};  // clipped matches per order
    std::array<double, 4> total{};    // hypothesis n-grams per order
    double hypLen = 0;
    double refLen = 0;
    BleuStats& operator+=(const BleuStats& o);
};

BleuStats bleuStats(std::string_view hypothesis, const std::vector<std::string>& references);
double bleuFromStats(const BleuStats& stats, bool effectiveOrder);  // 0..100

double sentenceBleu(std::string_view hypothesis, const std::vector<std::string>& references);
// references[i] are the references of hypotheses[i].
double corpusBleu(const std::vector<std::string>& hypotheses, const std::vector<std::vector<std::string>>& references);

}  // namespace verdict::core
