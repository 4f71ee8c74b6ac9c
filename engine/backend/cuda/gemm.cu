#include "backend/cuda/gemm.h"

#include <cublas_v2.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <type_traits>

namespace verdict::cuda {
namespace {

constexpr uint64_t kWorkspaceBytes = 32ull << 20;  // cuBLAS workspace

struct Blas {
    decltype(&cublasCreate_v2) create = nullptr;
    decltype(&cublasDestroy_v2) destroy = nullptr;
    decltype(&cublasSetStream_v2) setStream = nullptr;
    decltype(&cublasSetWorkspace_v2) setWorkspace = nullptr;
    decltype(&cublasSgemm_v2) sgemm = nullptr;
    // The C symbol (the C++ header adds an overload taking cudaDataType as the compute type).
    cublasStatus_t (*gemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                             const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                             cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
    std::string error;  // why it could not be loaded
};

const Blas& blas() {
    static const Blas kBlas = [] {
        Blas b;
        void* lib = nullptr;
        for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
            if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
        if (!lib) {
            b.error = "cuBLAS (libcublas.so.13) could not be loaded: install the CUDA Toolkit's libraries (or add their "
                      "folder to LD_LIBRARY_PATH)";
            return b;
        }
        auto load = [&](auto& fn, const char* symbol) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
            if (!fn && b.error.empty()) b.error = std::string("cuBLAS lacks ") + symbol;
        };
        load(b.create, "cublasCreate_v2");
        load(b.destroy, "cublasDestroy_v2");
        load(b.setStream, "cublasSetStream_v2");
        load(b.setWorkspace, "cublasSetWorkspace_v2");
        load(b.sgemm, "cublasSgemm_v2");
        load(b.gemmEx, "cublasGemmEx");
        return b;
    }();
    return kBlas;
}

const char* blasText(cublasStatus_t s) {
    switch (s) {
        case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
        case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED (out of memory)";
        case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
        case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
        case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
        case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
        default: return "cuBLAS error";
    }
}

enum class Kind { Matvec, Mma, Sgemm, HalfGemm };

Kind kindOf(const DeviceMatrix& w, int64_t nTok, bool mmaOff) {
    const bool quantised = w.type != BlockType::F32 && w.type != BlockType::F16;
    if (nTok <= kMatvecMaxCols) return Kind::Matvec;
    if (quantised && nTok <= kMmaMaxCols && !mmaOff) return Kind::Mma;
    return w.type == BlockType::F32 ? Kind::Sgemm : Kind::HalfGemm;
}

int64_t tileRows(const DeviceMatrix& w) { return std::max<int64_t>(1, std::min(w.rows, Gemm::kTileElems / w.cols)); }

// VERDICT_CUDA_MMA=0: 9..64-row passes of quantised weights through cuBLAS (read once per process).
bool mmaOffByEnv() {
    static const bool off = [] {
        const char* g = std::getenv("VERDICT_CUDA_MMA");
        return g && std::string(g) == "0";
    }();
    return off;
}

}  // namespace

Gemm::~Gemm() { reset(); }

void Gemm::reset() {
    if (m_handle) blas().destroy(m_handle);
    m_handle = nullptr;
    m_workspace.reset();
}

Result<void> Gemm::init(int device, Ledger& ledger, cudaStream_t stream, const std::string& deviceId) {
    if (!blas().error.empty()) return Error{deviceId + ": " + blas().error};
    if (cublasStatus_t st = blas().create(&m_handle); st != CUBLAS_STATUS_SUCCESS) {
        m_handle = nullptr;
        return Error{deviceId + ": cannot initialise cuBLAS: " + blasText(st)};
    }
    m_stream = stream;
    blas().setStream(m_handle, stream);
    auto ws = DeviceBuffer::allocate(device, ledger, VramKind::Workspace, kWorkspaceBytes, "the cuBLAS workspace");
    if (!ws) return ws.error();
    m_workspace = std::move(ws.value());
    blas().setWorkspace(m_handle, m_workspace.data(), m_workspace.bytes());
    m_mmaOff = mmaOffByEnv();
    return {};
}

uint64_t Gemm::xHalfElems(const DeviceMatrix& w, int64_t nTok) {
    return kindOf(w, nTok, mmaOffByEnv()) == Kind::HalfGemm ? static_cast<uint64_t>(nTok * w.cols) : 0;
}

uint64_t Gemm::wHalfElems(const DeviceMatrix& w, int64_t nTok) {
    if (kindOf(w, nTok, mmaOffByEnv()) != Kind::HalfGemm || w.type == BlockType::F16) return 0;
    return static_cast<uint64_t>(tileRows(w) * w.cols);
}

uint64_t Gemm::scaleElems(const DeviceMatrix& w, int64_t nTok) {
    const Kind k = kindOf(w, nTok, mmaOffByEnv());
    return k == Kind::Mma || k == Kind::HalfGemm ? static_cast<uint64_t>(nTok) : 0;
}

void Gemm::product(const DeviceMatrix& w, const float* x, int64_t ldx, int64_t nTok, float* y, int64_t ldy,
                   __half* xHalf, __half* wHalf, float* scale) {
    if (nTok <= 0) return;
    const int64_t N = w.rows, K = w.cols;
    const float one = 1.0f, zero = 0.0f;
    switch (kindOf(w, nTok, m_mmaOff)) {
        case Kind::Matvec: matvec(w, x, ldx, static_cast<int>(nTok), y, ldy, m_stream); return;
        case Kind::Mma: matmulMma(w, x, ldx, nTok, y, ldy, scale, m_stream); return;
        case Kind::Sgemm: {
            const cublasStatus_t st = blas().sgemm(m_handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(N),
                                                  static_cast<int>(nTok), static_cast<int>(K), &one,
                                                  reinterpret_cast<const float*>(w.data), static_cast<int>(K), x,
                                                  static_cast<int>(ldx), &zero, y, static_cast<int>(ldy));
            if (st != CUBLAS_STATUS_SUCCESS && m_error.empty()) m_error = blasText(st);
            return;
        }
        case Kind::HalfGemm: break;
    }
    // Tensor cores: f16 inputs (rows scaled into f16's range where they leave it), f32
    // accumulation and output; the weight in tiles of rows.
    activationScales(x, ldx, K, nTok, scale, m_stream);
    toHalfScaled(x, ldx, K, nTok, scale, xHalf, m_stream);
    const int64_t rowsPerTile = tileRows(w);
    for (int64_t r0 = 0; r0 < N; r0 += rowsPerTile) {
        const int64_t nr = std::min(rowsPerTile, N - r0);
        const __half* a = reinterpret_cast<const __half*>(w.data + static_cast<uint64_t>(r0) * w.rowBytes);
        if (w.type != BlockType::F16) {
            dequantizeF16(w, r0, nr, wHalf, m_stream);
            a = wHalf;
        }
        const cublasStatus_t st = blas().gemmEx(
            m_handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(nr), static_cast<int>(nTok), static_cast<int>(K), &one,
            a, CUDA_R_16F, static_cast<int>(K), xHalf, CUDA_R_16F, static_cast<int>(K), &zero, y + r0, CUDA_R_32F,
            static_cast<int>(ldy), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        if (st != CUBLAS_STATUS_SUCCESS && m_error.empty()) m_error = blasText(st);
    }
    scaleRows(y, ldy, N, nTok, scale, m_stream);
}

std::string Gemm::takeError() {
    std::string e = std::move(m_error);
    m_error.clear();
    return e;
}

}  // namespace verdict::cuda
