#pragma once
// The machine a benchmark ran on, printed first by every benchmark: ratios move with the CPU
// (bench/README.md keeps a column per CPU family), so a figure without its CPU means little.
// From `lscpu` (the model name, cores and caches), else /proc/cpuinfo; printed once, by rank 0
// of an mpirun (Open MPI's OMPI_COMM_WORLD_RANK) or by the only process.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace bench {

inline std::string machine() {
  std::string model, cpus, l2, l3;
  auto field = [](const char* line, const char* key, std::string& out) {
    const std::size_t k = std::strlen(key);
    if (std::strncmp(line, key, k) != 0 || line[k] != ':') return;
    const char* v = line + k + 1;
    while (*v == ' ' || *v == '\t') ++v;
    out.assign(v, std::strcspn(v, "\n"));
  };
  if (FILE* f = popen("LC_ALL=C lscpu 2>/dev/null", "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
      field(line, "Model name", model);
      field(line, "CPU(s)", cpus);
      field(line, "L2 cache", l2);
      field(line, "L3 cache", l3);
    }
    pclose(f);
  }
  if (model.empty())
    if (FILE* f = std::fopen("/proc/cpuinfo", "r")) {
      char line[512];
      while (model.empty() && std::fgets(line, sizeof line, f)) {
        std::string s(line);
        if (s.rfind("model name", 0) == 0 && s.find(':') != std::string::npos)
          model = s.substr(s.find(':') + 2, s.size() - s.find(':') - 3);
      }
      std::fclose(f);
    }
  std::string out = "cpu: " + (model.empty() ? std::string("unknown") : model);
  if (!cpus.empty()) out += ", " + cpus + " CPUs";
  if (!l2.empty()) out += ", L2 " + l2;
  if (!l3.empty()) out += ", L3 " + l3;
  return out;
}

/// Prints machine() on its own line (rank 0 only under mpirun).
inline void print_machine() {
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (rank && std::strcmp(rank, "0") != 0) return;
  std::printf("%s\n", machine().c_str());
  std::fflush(stdout);
}

}  // namespace bench
