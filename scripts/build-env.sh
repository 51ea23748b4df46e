# Sourced by the build scripts: Ninja as CMake's generator and ccache as the
# compiler launcher where installed. A build folder keeps the generator it was
# first configured with, so an existing Makefile build is left as it is.
if command -v ninja >/dev/null && [ -z "${CMAKE_GENERATOR:-}" ]; then
  export CMAKE_GENERATOR=Ninja
fi
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  export CMAKE_CUDA_COMPILER_LAUNCHER=${CMAKE_CUDA_COMPILER_LAUNCHER:-ccache}
fi
