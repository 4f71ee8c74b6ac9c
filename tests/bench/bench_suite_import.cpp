// Suite import speed: writes synthetic suites of a given size to a temp dir (MMLU-like JSONL,
// GSM8K-like JSONL, headerless MMLU CSV, and the JSONL gzip-compressed), imports each with the
// streaming importer, and prints one JSON object per file with MB/s (file bytes / wall seconds)
// and MB/s per CPU second. A benchmark, not a pass/fail test.
//
//   bench_suite_import [megabytes per file, default 200]
#include "core/suite/suite_importer.h"

#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>
#include <string>

using namespace verdict::core;

namespace {

const char* const kWords[] = {"the", "of", "group", "ring", "field", "prime", "order", "element", "value", "function",
                              "which", "following", "is", "true", "false", "statement", "integer", "matrix", "set", "map"};

std::string sentence(std::mt19937& rng, int words) {
    std::string s;
    for (int i = 0; i < words; ++i) {
        if (i) s += ' ';
        s += kWords[rng() % (sizeof kWords / sizeof kWords[0])];
    }
    return s;
}

void writeSuites(const std::filesystem::path& dir, size_t bytes) {
    std::mt19937 rng(42);
    {
        std::ofstream f(dir / "mmlu_like.jsonl");
        for (size_t n = 0; size_t(f.tellp()) < bytes; ++n)
            f << "{\"id\": \"q" << n << "\", \"subject\": \"abstract_algebra\", \"question\": \"" << sentence(rng, 30)
              << "?\", \"choices\": [\"" << sentence(rng, 4) << "\", \"" << sentence(rng, 4) << "\", \"" << sentence(rng, 4)
              << "\", \"" << sentence(rng, 4) << "\"], \"answer\": " << rng() % 4 << "}\n";
    }
    {
        std::ofstream f(dir / "gsm8k_like.jsonl");
        for (size_t n = 0; size_t(f.tellp()) < bytes; ++n) {
            const unsigned a = rng() % 5000, b = rng() % 5000;
            f << "{\"question\": \"" << sentence(rng, 40) << " " << a << " and " << b << "?\", \"answer\": \""
              << sentence(rng, 30) << "\\n" << a << " + " << b << " = <<" << a << "+" << b << "=" << a + b << ">>" << a + b
              << "\\n#### " << a + b << "\"}\n";
        }
    }
    {
        std::ofstream f(dir / "abstract_algebra_test.csv");
        for (size_t n = 0; size_t(f.tellp()) < bytes; ++n)
            f << "\"" << sentence(rng, 30) << ", really?\"," << sentence(rng, 3) << "," << sentence(rng, 3) << ","
              << sentence(rng, 3) << "," << sentence(rng, 3) << "," << char('A' + rng() % 4) << "\n";
    }
    {
        std::ifstream in(dir / "mmlu_like.jsonl", std::ios::binary);
        gzFile g = gzopen((dir / "mmlu_like.jsonl.gz").string().c_str(), "wb6");
        std::string buf(1 << 20, '\0');
        while (in) {
            in.read(buf.data(), std::streamsize(buf.size()));
            if (in.gcount() > 0) gzwrite(g, buf.data(), unsigned(in.gcount()));
        }
        gzclose(g);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const size_t mb = argc > 1 ? size_t(std::stoul(argv[1])) : 200;
    const auto dir = std::filesystem::temp_directory_path() / ("verdict-bench-import-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    writeSuites(dir, mb << 20);
    std::printf("[\n");
    const char* files[] = {"mmlu_like.jsonl", "gsm8k_like.jsonl", "abstract_algebra_test.csv", "mmlu_like.jsonl.gz"};
    for (size_t i = 0; i < 4; ++i) {
        const auto path = (dir / files[i]).string();
        size_t items = 0;
        const std::clock_t c0 = std::clock();
        const auto t0 = std::chrono::steady_clock::now();
        auto r = importSuiteStreaming(path, {}, [&](SuiteItem&&) {
            ++items;
            return true;
        });
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
        if (!r) {
            std::fprintf(stderr, "%s: %s\n", files[i], r.error().message.c_str());
            return 1;
        }
        std::printf("  {\"file\": \"%s\", \"shape\": \"%s\", \"items\": %zu, \"rejected\": %zu, \"file_mb\": %.1f, "
                    "\"text_mb\": %.1f, \"wall_s\": %.3f, \"cpu_s\": %.3f, \"mb_per_s\": %.1f, \"text_mb_per_s\": %.1f, "
                    "\"mb_per_cpu_s\": %.1f}%s\n",
                    files[i], r->shape.c_str(), items, r->rejectedCount, r->fileBytes / 1e6, r->textBytes / 1e6, wall, cpu,
                    r->fileBytes / 1e6 / wall, r->textBytes / 1e6 / wall, r->textBytes / 1e6 / cpu, i + 1 < 4 ? "," : "");
    }
    std::printf("]\n");
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return 0;
}
