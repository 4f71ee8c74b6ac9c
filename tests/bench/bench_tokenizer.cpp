// Tokenizer throughput benchmark. Prints one JSON object; never fails on speed.
//
//   bench_tokenizer [--mb N] [--repeat R] VOCAB.gguf...
//
// With no file arguments it uses the tokenizer vocabularies of the shared fixtures
// (VERDICT_FIXTURES_DIR or ../shared/fixtures). For every vocabulary it reports MB/s of
// encode() on one core (thread CPU time) for: a mixed English / Chinese / code text (default 10 MB), 1 MB of "a",
// 1 MB of spaces, and decode() of the mixed text's ids. Each figure is the best of R runs
// (default 3), measured in thread CPU time, so that other load on the machine disturbs it less.
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace verdict;

namespace {

// Deterministic mixed text: English prose, Chinese prose, C++/Python code, numbers, emoji.
std::string mixedText(size_t bytes) {
    static const char* kWords[] = {
        "the", "of", "and", "to", "in", "is", "was", "that", "for", "it", "with", "as", "his", "on", "be",
        "at", "by", "I", "this", "had", "not", "are", "but", "from", "or", "have", "an", "they", "which",
        "one", "you", "were", "her", "all", "she", "there", "would", "their", "we", "him", "been", "has",
        "when", "who", "will", "more", "no", "if", "out", "so", "said", "what", "up", "its", "about",
        "into", "than", "them", "can", "only", "other", "new", "some", "could", "time", "these", "two",
        "may", "then", "do", "first", "any", "my", "now", "such", "like", "our", "over", "man", "me",
        "even", "most", "made", "after", "also", "did", "many", "before", "must", "through", "back",
        "years", "where", "much", "your", "way", "well", "down", "should", "because", "each", "just",
        "tokenizer", "benchmark", "throughput", "performance", "language", "model", "Verdict", "GGUF",
        "isn't", "don't", "we'll", "they're", "I'm", "you've", "HTTP", "JSON", "McDonald", "naïve", "café"};
    static const char* kHan[] = {"的", "一", "是", "在", "不", "了", "有", "和", "人", "这", "中", "大", "为", "上",
                                 "个", "国", "我", "以", "要", "他", "时", "来", "用", "们", "生", "到", "作", "地",
                                 "于", "出", "就", "分", "对", "成", "会", "可", "主", "发", "年", "动", "同", "工",
                                 "也", "能", "下", "过", "子", "说", "产", "种", "面", "而", "方", "后", "多", "定",
                                 "行", "学", "法", "所", "民", "得", "经", "十", "三", "之", "进", "着", "等", "部"};
    static const char* kCode[] = {
        "for (size_t i = 0; i < n; ++i) {\n    sum += a[i] * b[i];\n}\n",
        "def tokenize(text: str) -> list[int]:\n    return [vocab[t] for t in text.split()]\n",
        "if (x != nullptr && x->size() > 0) { return x->front(); }\n",
        "    std::vector<int32_t> ids = tok.encode(\"Hello, world!\", true, false);\n",
        "SELECT id, name FROM users WHERE age >= 18 ORDER BY name;\n",
        "\t\tconst auto& [key, value] = *it; // 0x7fff_ffff\n"};
    std::mt19937 rng(12345);
    std::string s;
    s.reserve(bytes + 256);
    while (s.size() < bytes) {
        const unsigned kind = rng() % 10;
        if (kind < 5) {
            const int n = 8 + int(rng() % 20);
            for (int i = 0; i < n; ++i) {
                std::string w = kWords[rng() % (sizeof(kWords) / sizeof(kWords[0]))];
                if (i == 0) w[0] = char(std::toupper(static_cast<unsigned char>(w[0])));
                s += w;
                s += (i + 1 == n) ? ". " : (rng() % 9 == 0 ? ", " : " ");
            }
            if (rng() % 4 == 0) s += std::to_string(rng() % 100000) + " items 😀\n\n";
        } else if (kind < 8) {
            const int n = 10 + int(rng() % 40);
            for (int i = 0; i < n; ++i) s += kHan[rng() % (sizeof(kHan) / sizeof(kHan[0]))];
            s += (rng() % 3 == 0) ? "。\n" : "，";
        } else {
            s += kCode[rng() % (sizeof(kCode) / sizeof(kCode[0]))];
        }
    }
    // Cut on a character boundary.
    size_t cut = bytes;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s.resize(cut);
    return s;
}

// CPU time of this thread: the machine running the benchmark may be busy with other work, and
// the numbers are meant to say what one core does.
double cpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
    double mb = 10.0;
    int repeat = 3;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--mb" && i + 1 < argc) mb = std::atof(argv[++i]);
        else if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
        else files.push_back(a);
    }
    if (files.empty()) {
        const char* env = std::getenv("VERDICT_FIXTURES_DIR");
        const std::filesystem::path dir = std::filesystem::path(env && *env ? env :
#ifdef VERDICT_FIXTURES_DIR
                                                                                VERDICT_FIXTURES_DIR
#else
                                                                                "../shared/fixtures"
#endif
                                                                                ) / "tokenizer";
        for (const char* n : {"llama-spm", "gpt-2", "deepseek-llm", "deepseek-coder", "falcon", "starcoder",
                              "bert-bge", "phi-3", "mpt", "refact"})
            files.push_back((dir / ("ggml-vocab-" + std::string(n) + ".gguf")).string());
    }

    const std::string mixed = mixedText(size_t(mb * 1024 * 1024));
    const std::string as(1 << 20, 'a');
    const std::string spaces(1 << 20, ' ');

    std::printf("{\n  \"mixed_text_bytes\": %zu,\n  \"repeat\": %d,\n  \"clock\": \"thread_cpu_time\",\n"
                "  \"hardware_threads\": %u,\n  \"vocabularies\": [",
                mixed.size(), repeat, std::thread::hardware_concurrency());
    bool first = true;
    for (const std::string& path : files) {
        auto f = gguf::GgufFile::open(path);
        if (!f) {
            std::fprintf(stderr, "%s\n", f.error().message.c_str());
            continue;
        }
        const double t0 = cpuSeconds();
        auto tok = tok::Tokenizer::fromGguf(**f);
        const double t1 = cpuSeconds();
        if (!tok) {
            std::fprintf(stderr, "%s\n", tok.error().message.c_str());
            continue;
        }
        const tok::Tokenizer& t = **tok;
        auto rate = [&](const std::string& text, size_t* nTokens) {
            double best = 0;
            for (int r = 0; r < repeat; ++r) {
                const double a = cpuSeconds();
                const std::vector<int32_t> ids = t.encode(text, false, false);
                const double b = cpuSeconds();
                if (nTokens) *nTokens = ids.size();
                best = std::max(best, double(text.size()) / (1024.0 * 1024.0) / (b - a));
            }
            return best;
        };
        size_t nMixed = 0, nA = 0, nSp = 0;
        const double rMixed = rate(mixed, &nMixed);
        const double rA = rate(as, &nA);
        const double rSp = rate(spaces, &nSp);
        const std::vector<int32_t> ids = t.encode(mixed, false, false);
        double decodeRate = 0;
        for (int r = 0; r < repeat; ++r) {
            const double d0 = cpuSeconds();
            const std::string back = t.decode(ids);
            const double d1 = cpuSeconds();
            decodeRate = std::max(decodeRate, double(back.size()) / (1024.0 * 1024.0) / (d1 - d0));
        }
        std::printf("%s\n    {\"file\": \"%s\", \"model\": \"%s\", \"pre\": \"%s\", \"load_s\": %.3f, "
                    "\"mixed_MBps\": %.2f, \"mixed_tokens\": %zu, \"a_1MB_MBps\": %.2f, \"a_tokens\": %zu, "
                    "\"spaces_1MB_MBps\": %.2f, \"spaces_tokens\": %zu, \"decode_MBps\": %.2f}",
                    first ? "" : ",", std::filesystem::path(path).filename().string().c_str(),
                    std::string(t.model()).c_str(), std::string(t.pre()).c_str(), t1 - t0, rMixed, nMixed, rA,
                    nA, rSp, nSp, decodeRate);
        std::fflush(stdout);
        first = false;
    }
    std::printf("\n  ]\n}\n");
    return 0;
}
