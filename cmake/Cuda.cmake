# CUDA is optional: a found toolkit compiles the CUDA backend (also on machines with no GPU);
# none gives a CPU-only build. Said once, at configure time.
set(VERDICT_HAVE_CUDA OFF)
if(VERDICT_ENABLE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Machine code for A100 (sm_80), RTX 30xx / A-series (sm_86), RTX 40xx / L4 / L40 (sm_89) and
      # H100 / H200 (sm_90), plus sm_90 PTX that newer GPUs JIT-compile. A single GPU's build can
      # say -DCMAKE_CUDA_ARCHITECTURES=native (tests/gpu/run.sh does).
      set(CMAKE_CUDA_ARCHITECTURES "80-real;86-real;89-real;90-real;90-virtual")
    endif()
    enable_language(CUDA)
    # CMake 3.25 does not know nvcc's C++20 flag (nvcc 12+ has it); the engine's headers need it.
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    endif()
    find_package(CUDAToolkit REQUIRED)
    set(VERDICT_HAVE_CUDA ON)
    message(STATUS "Verdict: CUDA backend ON (${CMAKE_CUDA_COMPILER}, archs ${CMAKE_CUDA_ARCHITECTURES})")
  else()
    message(STATUS "Verdict: no CUDA compiler found - CPU-only build")
  endif()
else()
  message(STATUS "Verdict: CUDA disabled (VERDICT_ENABLE_CUDA=OFF) - CPU-only build")
endif()
