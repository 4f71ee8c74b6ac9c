// libFuzzer entry: any byte string must parse into a GgufFile or a clean Error, never crash,
// hang or allocate absurdly; a parsed file must also describe cleanly.
#include "gguf/gguf_file.h"
#include "verdict/engine/model_card.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto f = verdict::gguf::GgufFile::parse(data, size, "fuzz-input");
    if (!f) return 0;
    auto card = verdict::describeModel(**f, 4096);
    (void)card;
    for (const auto& t : (*f)->tensors()) {
        // Touch the first and last byte of every tensor: the reader promised they are in range.
        if (t.nBytes) {
            volatile uint8_t a = t.data[0];
            volatile uint8_t b = t.data[t.nBytes - 1];
            (void)a;
            (void)b;
        }
    }
    return 0;
}
