// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", 2014): the one copy of its mixer and generator. Every sampler
// permutation, crop plan and synthetic picture is a pure function of it, so
// its outputs are frozen: the same on every platform and build (unlike the
// std:: engines and distributions).
#ifndef UNIRECORD_SRC_UTIL_SPLITMIX64_H_
#define UNIRECORD_SRC_UTIL_SPLITMIX64_H_

#include <cmath>
#include <cstdint>

namespace unirecord {

// The generator's increment, 2^64 / golden ratio.
inline constexpr uint64_t kSplitMix64Gamma = 0x9e3779b97f4a7c15ULL;

// SplitMix64's finaliser: a bijective 64-bit mix with full avalanche.
constexpr uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The generator: each Next() adds the gamma to the state and mixes it.
class SplitMix64 {
 public:
  explicit constexpr SplitMix64(uint64_t seed) : state_(seed) {}
  constexpr uint64_t Next() { return Mix64(state_ += kSplitMix64Gamma); }

 private:
  uint64_t state_;
};

// Counter-based generator: draw `counter` of the stream keyed by (seed,
// epoch, record) is a pure function of the four integers, so every worker,
// thread and machine computes the same crop (image/crop_plan.cc) and the
// same clip (pipeline/clip_sampling.cc) for the same sample.
class KeyedRandom {
 public:
  KeyedRandom(uint64_t seed, uint64_t epoch, uint64_t record) : key_(Mix64(Mix64(Mix64(seed) ^ epoch) ^ record)) {}

  // Uniform in [0, 1) with 53 random bits.
  double Uniform(uint64_t counter) const {
    uint64_t bits = Mix64(key_ + (counter + 1) * kSplitMix64Gamma);
    return static_cast<double>(bits >> 11) * 0x1.0p-53;
  }
  double Uniform(uint64_t counter, double lo, double hi) const { return lo + (hi - lo) * Uniform(counter); }
  // Uniform integer in [0, n) (n <= 65536 here, so the bias of the
  // multiply-floor is below 2^-37).
  int Below(uint64_t counter, int n) const { return static_cast<int>(std::floor(Uniform(counter) * n)); }

 private:
  uint64_t key_;
};

}  // namespace unirecord

#endif  // UNIRECORD_SRC_UTIL_SPLITMIX64_H_
