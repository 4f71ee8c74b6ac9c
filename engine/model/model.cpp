#include "verdict/engine/model.h"
#include "verdict/engine/devices.h"

#include "arch/arch_registry.h"
#include "arch/decoder.h"
#include "arch/tensor_binder.h"
#include "backend/cpu/kernels.h"
#include "model/model_impl.h"
#include "tensor/tensor_type.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <string_view>
#include <vector>

namespace verdict {
namespace {

bool cancelled(const ModelOptions& o, float fraction) {
    if (o.cancel && o.cancel->load(std::memory_order_relaxed)) return true;
    if (o.progress && !o.progress(fraction)) return true;
    return false;
}

// Reads one byte of every page of the tensor data so that the weights are resident when the
// first token is computed (load time is then measured here, not in the first forward pass), with
// progress and cancellation between chunks. Like llama.cpp's MAP_POPULATE, nothing is copied.
Result<void> pageIn(const gguf::GgufFile& file, const ModelOptions& o) {
    const auto page = static_cast<uint64_t>(std::max(4096L, sysconf(_SC_PAGESIZE)));
    uint64_t total = 0;
    for (const auto& t : file.tensors()) total += t.nBytes;
    uint64_t done = 0, nextReport = 0;
    volatile uint8_t sink = 0;
    for (const auto& t : file.tensors()) {
        if (!t.data || t.nBytes == 0) continue;
        const auto begin = reinterpret_cast<uintptr_t>(t.data);
        const uintptr_t alignedBegin = begin / page * page;
        madvise(reinterpret_cast<void*>(alignedBegin), t.nBytes + (begin - alignedBegin), MADV_WILLNEED);
        uint8_t acc = 0;
        for (uint64_t off = 0; off < t.nBytes; off += page) acc ^= t.data[off];
        acc ^= t.data[t.nBytes - 1];
        sink = sink ^ acc;
        done += t.nBytes;
        if (done >= nextReport) {
            if (cancelled(o, total ? 0.1f + 0.85f * static_cast<float>(done) / static_cast<float>(total) : 0.95f))
                return Error{file.path() + ": loading cancelled"};
            nextReport = done + total / 100;
        }
    }
    (void)sink;
    return {};
}

// The CPU kernels' load-time repacking (CpuBackend::packMatrices): every matrix the forward
// multiplies in a type the active kernels pack, taken from the file mapping (tensors the
// architecture rebuilt are left as they are), except token_embd when only its rows are read (an
// output head of its own). The copies take the place of the mapped pages, which are dropped
// (MADV_DONTNEED: the file stays in the page cache, and a row-wise reader faults them back in),
// so resident memory stays at the weights' size. VERDICT_CPU_REPACK=0 turns it off. Progress
// (0.95 -> 1) and cancellation between matrices: this copies the weights once (~1.5 GB/s on 2
// threads of the Zen 4 VM, page zeroing included), seconds for a large model.
// `only`: the weights to consider (null: all).
Result<void> packForCpu(detail::ModelImpl& m, const ModelOptions& o,
                        const std::function<bool(const std::string&)>& only = nullptr) {
    if (const char* env = std::getenv("VERDICT_CPU_REPACK"); env && std::string_view(env) == "0") return {};
    const bool tied = m.file->tensor("output.weight") == nullptr;
    std::vector<backend::Matrix> matrices;
    for (const arch::WeightRegion& r : m.weightRegions) {
        if (only && !only(r.name)) continue;
        const gguf::TensorInfo* t = m.file->tensor(r.name);
        if (!t || t->data != r.host || t->nBytes != r.bytes || t->nDims < 2 || t->ne[1] < 16 || !cpu::canPack(t->type))
            continue;
        if (r.name == "token_embd.weight" && !tied) continue;
        const auto rowBytes = tensor::rowBytes(t->type, t->ne[0]);
        if (!rowBytes) continue;
        matrices.push_back(backend::Matrix{t->type, t->data, static_cast<int64_t>(t->ne[0]), static_cast<int64_t>(t->ne[1]),
                                           static_cast<int64_t>(t->ne[2] * t->ne[3]), *rowBytes});
    }
    // Matrix by matrix, its pages dropped as soon as it is copied: the peak resident set stays
    // at the weights plus one matrix.
    const auto page = static_cast<uintptr_t>(std::max(4096L, sysconf(_SC_PAGESIZE)));
    uint64_t total = 0;
    for (const backend::Matrix& w : matrices) total += w.rowBytes * static_cast<uint64_t>(w.rows * w.nMat);
    for (const backend::Matrix& w : matrices) {
        if (cancelled(o, 0.95f + 0.05f * static_cast<float>(m.packedBytes) / static_cast<float>(std::max<uint64_t>(total, 1))))
            return Error{m.path + ": loading cancelled"};
        m.packedBytes += m.cpu->packMatrices({w});
        const auto begin = reinterpret_cast<uintptr_t>(w.data);
        const uintptr_t first = (begin + page - 1) / page * page;
        const uintptr_t last = (begin + w.rowBytes * static_cast<uint64_t>(w.rows * w.nMat)) / page * page;
        if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
    }
    return {};
}

// The architecture's one forward (arch/) on the op backend of cuda:N: the weights uploaded into device memory,
// sessions' caches and scratch allocated there. What the backend cannot compute yet is an error
// now, before any session: a weight type, MLA's latent attention, a head size, attention sinks,
// the expert counts.
Result<void> openOneForwardOnGpu(detail::ModelImpl& m, int deviceIndex) {
    const std::string id = "cuda:" + std::to_string(deviceIndex);
    auto be = gpu::openGpuBackend(deviceIndex);
    if (!be) return be.error();
    backend::Backend& device = *be.value();
    for (const arch::WeightRegion& r : m.weightRegions)
        if (!device.supports(r.type))
            return Error{"tensor '" + r.name + "' has type " + std::string(tensor::typeName(r.type)) + ", which " + id
                         + " cannot compute yet; use --device cpu"};
    backend::LatentAttention mla;
    mla.nHead = static_cast<int>(m.cfg.nHead);
    mla.rank = static_cast<int>(m.cfg.kvLoraRank);
    mla.dRope = static_cast<int>(m.cfg.nRot);
    if (m.cfg.kvLoraRank > 0 && !device.supports(mla))
        return Error{"multi-head latent attention of rank " + std::to_string(mla.rank) + " (" + m.cfg.arch
                     + ") has no CUDA kernel yet on " + id + "; use --device cpu"};
    backend::Attention attn;
    attn.nHead = static_cast<int>(m.cfg.nHead);
    attn.nHeadKv = static_cast<int>(m.cfg.nHeadKv);
    attn.dimK = static_cast<int>(m.cfg.headDimK);
    attn.dimV = static_cast<int>(m.cfg.headDimV);
    if (m.cfg.kvLoraRank == 0 && !device.supports(attn))
        return Error{"attention heads of " + std::to_string(attn.dimK) + " / " + std::to_string(attn.dimV)
                     + " elements have no CUDA kernel yet on " + id + "; use --device cpu"};
    if (m.cfg.nExpert > 0 && !device.supportsExperts(m.cfg.nExpert, m.cfg.nExpertUsed))
        return Error{std::to_string(m.cfg.nExpert) + " experts (" + std::to_string(m.cfg.nExpertUsed)
                     + " used per token) exceed what " + id + " routes (512, 32); use --device cpu"};
    static const float kSink = 0.0f;
    backend::Attention withSinks = attn;
    withSinks.sinks = &kSink;
    for (const arch::WeightRegion& r : m.weightRegions)
        if (r.name.ends_with("attn_sinks.weight") && !device.supports(withSinks))
            return Error{"attention sinks (" + m.cfg.arch + ") have no CUDA kernel yet on " + id + "; use --device cpu"};
    m.device = std::move(be.value());
    m.deviceId = id;
    return detail::runForwardOn(m, *m.device, m.gpuLayers);
}

}  // namespace

Model::Model() : m_impl(std::make_unique<detail::ModelImpl>()) {}
Model::~Model() = default;

Result<std::shared_ptr<const Model>> Model::open(const std::string& path, const ModelOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<Model> model(new Model());
    detail::ModelImpl& m = *model->m_impl;
    m.path = path;
    auto deviceIndex = parseDeviceIndex(options.device);
    if (!deviceIndex) return deviceIndex.error();
    if (cancelled(options, 0.0f)) return Error{path + ": loading cancelled"};
    // Created first: its workers start while the file is parsed.
    m.pool = std::make_unique<cpu::ThreadPool>(options.threads);
    m.cpu = std::make_unique<cpu::CpuBackend>(*m.pool);
    m.be = m.cpu.get();

    auto file = gguf::GgufFile::open(path);
    if (!file) return file.error();
    m.file = std::move(file.value());

    auto arch = arch::architectureFor(*m.file);
    if (!arch) return arch.error();
    m.arch = *arch;

    auto cfg = m.arch->readConfig(*m.file);
    if (!cfg) return cfg.error();
    m.cfg = std::move(cfg.value());

    arch::TensorBinder binder(*m.file);
    auto weights = m.arch->bindWeights(m.cfg, binder);
    if (!weights) return weights.error();
    m.weights = std::move(weights.value());
    m.weightsBytes = binder.boundBytes();
    m.weightRegions = binder.regions();
    if (cancelled(options, 0.1f)) return Error{path + ": loading cancelled"};

    auto tok = ModelTokenizer::load(*m.file);
    if (tok) {
        m.tokenizer = std::move(tok.value());
    } else {
        m.tokenizerError = tok.error().message;
    }

    if (auto r = pageIn(*m.file, options); !r) return r.error();
    if (*deviceIndex < 0) {
        try {
            if (auto r = packForCpu(m, options); !r) return r.error();
        } catch (const std::bad_alloc&) {
            return Error{path + ": not enough memory to repack the weights for the CPU kernels (VERDICT_CPU_REPACK=0 reads them in place)"};
        }
    }
    if (*deviceIndex >= 0) {
        m.gpuLayers = options.gpuLayers < 0 ? m.cfg.nLayer : std::min<int64_t>(options.gpuLayers, m.cfg.nLayer);
        // Every architecture runs its one forward (arch/) on the CUDA op backend.
        if (auto r = openOneForwardOnGpu(m, *deviceIndex); !r) return Error{path + ": " + r.error().message};
        if (auto r = detail::packCpuStages(m, options); !r) return r.error();
    }

    const arch::ArchConfig& c = m.cfg;
    m.shape.arch = c.arch;
    m.shape.nVocab = c.nVocab;
    m.shape.nCtxTrain = c.nCtxTrain;
    m.shape.nEmbd = c.nEmbd;
    m.shape.nLayer = c.nLayer;
    m.shape.nHead = c.nHead;
    m.shape.nHeadKv = c.nHeadKv;
    m.shape.nExpert = c.nExpert;
    m.shape.nExpertUsed = c.nExpertUsed;
    m.shape.tiedOutput = m.file->tensor("output.weight") == nullptr;  // the architectures reuse token_embd then

    m.loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (cancelled(options, 1.0f)) return Error{path + ": loading cancelled"};
    return std::shared_ptr<const Model>(std::move(model));
}

const std::string& Model::path() const { return m_impl->path; }

std::vector<std::string> Model::partPaths() const {
    if (m_impl->file && !m_impl->file->partPaths().empty()) return m_impl->file->partPaths();
    return {m_impl->path};
}
const ModelShape& Model::shape() const { return m_impl->shape; }
int Model::threads() const { return m_impl->pool->size(); }
double Model::loadMs() const { return m_impl->loadMs; }
uint64_t Model::weightsBytes() const { return m_impl->weightsBytes; }
std::string Model::device() const {
    return m_impl->device ? m_impl->deviceId : "cpu";
}
int Model::gpuLayers() const { return static_cast<int>(m_impl->device ? m_impl->gpuLayers : 0); }
std::string Model::deviceName() const {
    const DeviceList list = listDevices();
    const std::string id = device();
    for (const DeviceInfo& d : list.devices)
        if (d.id == id) return d.name;
    return list.devices.front().name;
}

bool Model::hasTokenizer() const { return m_impl->tokenizer != nullptr; }

Result<std::vector<int32_t>> Model::tokenize(std::string_view text, bool addSpecial, bool parseSpecial) const {
    if (!m_impl->tokenizer) return Error{"no tokenizer: " + m_impl->tokenizerError};
    return m_impl->tokenizer->encode(text, addSpecial, parseSpecial);
}

std::string Model::tokenToPiece(int32_t token, bool renderSpecial) const {
    return m_impl->tokenizer ? m_impl->tokenizer->piece(token, renderSpecial) : std::string();
}

std::string Model::detokenize(const std::vector<int32_t>& tokens) const {
    return m_impl->tokenizer ? m_impl->tokenizer->decode(tokens) : std::string();
}

bool Model::isEog(int32_t token) const { return m_impl->tokenizer && m_impl->tokenizer->isEog(token); }
int32_t Model::bos() const { return m_impl->tokenizer ? m_impl->tokenizer->bos() : -1; }
int32_t Model::eos() const { return m_impl->tokenizer ? m_impl->tokenizer->eos() : -1; }

namespace detail {

// A split's device side: blocks [0, splitLayer) and what is not a block's, but the output head.
static bool onSplitDevice(const ModelImpl& m, const std::string& name) {
    int64_t layer = -1;
    return std::sscanf(name.c_str(), "blk.%" SCNd64 ".", &layer) == 1 ? layer < m.splitLayer : !name.starts_with("output");
}

Result<void> packCpuStages(ModelImpl& m, const ModelOptions& o) {
    if (m.splitLayer <= 0) return {};
    // The CPU stages' matrices, and token_embd when it is also the output head (tied): its
    // embedding rows went up to the device as they are on disk.
    const bool tied = m.file->tensor("output.weight") == nullptr;
    try {
        return packForCpu(m, o, [&](const std::string& name) {
            return !onSplitDevice(m, name) || (tied && name == "token_embd.weight");
        });
    } catch (const std::bad_alloc&) {
        return Error{m.path + ": not enough memory to repack the CPU layers' weights (VERDICT_CPU_REPACK=0 reads them in place)"};
    }
}

Result<void> runForwardOn(ModelImpl& m, backend::Backend& be, int64_t layers) {
    {
        const std::lock_guard lock(m.batchScratchMutex);
        m.batchScratch.clear();  // on the old backend
        m.batchScratchTail.clear();
    }
    m.placement.reset();
    m.splitLayer = layers > 0 && layers < m.cfg.nLayer ? layers : 0;
    if (!be.hostMemory()) {
        // A split uploads the first blocks' tensors and what is not a block's but the output head.
        std::vector<arch::WeightRegion> regions;
        for (const arch::WeightRegion& r : m.weightRegions)
            if (m.splitLayer == 0 || onSplitDevice(m, r.name)) regions.push_back(r);
        auto placed = arch::WeightPlacement::upload(be, std::move(regions));
        if (!placed) return Error{m.path + ": " + placed.error().message};
        m.placement = std::move(placed.value());
    }
    m.be = &be;
    return {};
}

}  // namespace detail
}  // namespace verdict
