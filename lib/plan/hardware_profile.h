// Hardware profiles of `vgen plan --predict` (recipes/hardware/<name>.yaml): peak rates, efficiency
// curves of GEMM and attention by size, HBM bandwidth, link bandwidth and latency per collective
// kind inside and between NVLink domains, copy engines, and the host-side rates of the pipeline.
// Every number is required and must be positive; a problem is kRecipe naming the file and key.
// The `fp8` section is optional: a profile without it prices no precision fp8.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vgen {

// Piecewise-linear in log(x), clamped at both ends: efficiency (fraction of a peak) against a size.
struct EfficiencyCurve {
  std::vector<std::pair<double, double>> points;  // (size, fraction), sizes ascending
  double at(double x) const;
};

// One collective kind on one fabric: time = latency + bytes / bandwidth (bytes leaving a rank).
struct LinkCost {
  double gbps = 0;        // GB/s per rank (1e9 bytes)
  double latency_us = 0;  // per call
  double seconds(double bytes, int calls) const { return calls * latency_us * 1e-6 + bytes / (gbps * 1e9); }
};

struct FabricCost {
  LinkCost all_to_all, all_gather, p2p, copy_engine;
};

// precision fp8 (docs/fp8.md): the e4m3 block linears and self-attention. Everything else of an fp8
// forward, and every step in bf16, is priced with the bf16 numbers.
struct Fp8Profile {
  EfficiencyCurve gemm;       // by GEMM rows M: fraction of fp8_tflops reached by the quantised block linears
  // The same for the INT8 GEMMs (fp8_config.gemm_format int8; the dense INT8 peak equals the fp8 one on
  // Hopper), `gemm_int8_by_rows`; absent: that format is not priced on the profile.
  std::optional<EfficiencyCurve> gemm_int8;
  EfficiencyCurve attention;  // by GFLOP per call: fraction of fp8_tflops reached by the e4m3 attention kernel
  double gemm_quant = 0;       // fraction of hbm_tbps: the GEMM inputs' row quantisation (3 bytes per element)
  double attention_quant = 0;  // fraction of hbm_tbps: the attention's q/k/v quantisation (3 bytes per element)
};

struct HardwareProfile {
  std::string name, gpu, source_path;
  // Words of a GPU's name (as the CUDA driver reports it) that select this profile on a machine whose
  // recipe names none (`detect`, optional; plan/hardware_choice.h).
  std::vector<std::string> detect;
  int nvlink_domain = 1;  // GPUs that share the NVLink fabric (a node, or a whole NVL72 rack)
  double memory_gib = 0;
  double bf16_tflops = 0, fp8_tflops = 0, fp32_tflops = 0, hbm_tbps = 0;
  EfficiencyCurve gemm;            // by GEMM rows M (tokens)
  EfficiencyCurve attention;       // by GFLOP per call, the recipe's attention backend `auto`
  EfficiencyCurve attention_cudnn; // by GFLOP per call, attention_config.backend cudnn
  double elementwise_efficiency = 0;  // fraction of hbm_tbps reached by the memory-bound ops
  double vae_efficiency = 0;          // fraction of the peak reached by the VAE decoder's convolutions (its
                                      // memory-bound passes are priced at elementwise_efficiency of the HBM)
  double vae_halo_conv_us = 0;        // parallel VAE: per spatial conv call, the cost of its halo exchange
                                      // beyond the bytes and link latencies priced (edge copies, rendezvous)
  FabricCost intra, inter;
  double loader_gbps = 0;             // checkpoint bytes per second per reading rank (page cache warm)
  double mp4_mpix_per_s = 0;          // H.264 encode, host
  double frame_mpix_per_s = 0;        // VAE output to frames (GPU postprocess + copy to host)
  double text_fixed_s = 0;            // tokenizer and launch cost of one text encode
  double forward_overhead = 0;        // pipeline forward over the benchmark forward (scheduler, CFG, events)
  std::optional<Fp8Profile> fp8;      // the `fp8` section; absent: precision fp8 is not priced on this profile
};

// The directory of the shipped profiles: $VGEN_HARDWARE_DIR, else recipes/hardware below the
// current directory, else next to the executable (<prefix>/bin/../../recipes/hardware).
std::string hardware_dir();
// The profile names found there (sorted).
std::vector<std::string> hardware_profile_names();
// Loads `name` (a name from hardware_profile_names() or a path to a .yaml file). kRecipe for an
// unknown name (listing the known ones) or a missing / non-positive number (naming its key).
HardwareProfile load_hardware_profile(const std::string& name);
HardwareProfile parse_hardware_profile(const std::string& yaml_text, const std::string& path);

}  // namespace vgen
