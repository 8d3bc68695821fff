// Block rounds, 3: an all_to_all redistribution of objects to the block that owns their key
// (DIY's all_to_all over the entries of an Element; shell/blocks.hpp).
//
// 10 blocks (the entries of /owners, a SynapseBlock element) each own a range of 1000 target
// neurons, and each starts with 2000 synapses made elsewhere, whose targets lie anywhere. The
// declared "gather" function, run by allToAll, is written as one round: it sends each synapse to
// the block that owns its target, then stores what it received, sorted by (target, source). The
// rounds under it are k-ary (k = 3 here: 10 blocks make one round of 2 and one of 5), and no
// block sends more than k messages a round. The driver checks each block's synapses against a
// serial redistribution.
//
// Run: mpirun -n 2 block_redistribute
#include <algorithm>
#include <boost/serialization/vector.hpp>
#include <cstdint>
#include <cstdio>
#include <tuple>
#include <vector>

#include "core/class_builder.hpp"
#include "shell/field.hpp"
#include "shell/runtime.hpp"

using namespace antler;

namespace {

constexpr int kBlocks = 10, kPerBlock = 1000, kMade = 2000;

struct Synapse {
  std::uint32_t source, target;
  float weight, delay;
  bool operator<(const Synapse& o) const {
    return std::tie(target, source) < std::tie(o.target, o.source);
  }
  bool operator==(const Synapse& o) const = default;
};

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The synapses block g starts with (made where their sources are).
std::vector<Synapse> made_by(int g) {
  std::vector<Synapse> v;
  for (int i = 0; i < kMade; ++i) {
    const std::uint64_t h =
        mix(static_cast<std::uint64_t>(g) * 100003 + static_cast<std::uint64_t>(i));
    v.push_back({static_cast<std::uint32_t>(g * kPerBlock + i % kPerBlock),
                 static_cast<std::uint32_t>(h % (kBlocks * kPerBlock)),
                 static_cast<float>((h >> 32) % 1000) * 1e-3f,
                 1e-3f * static_cast<float>(1 + (h >> 50) % 5)});
  }
  return v;
}

}  // namespace

class SynapseBlock {
 public:
  void reinit(const Eref& e, ProcPtr) {
    made_ = made_by(static_cast<int>(e.dataIndex()));
    owned_.clear();
  }
  void process(const Eref&, ProcPtr) {}
  /// Round 0: each synapse to the block owning its target (one message per destination block);
  /// round 1: what every block sent here, sorted.
  void gather(comm::ReduceProxy& rp) {
    if (rp.round() == 0) {
      std::vector<std::vector<Synapse>> to(static_cast<std::size_t>(rp.nblocks()));
      for (const Synapse& s : made_) to[s.target / kPerBlock].push_back(s);
      for (std::size_t d = 0; d < to.size(); ++d)
        if (!to[d].empty()) rp.enqueue(static_cast<int>(d), to[d]);
      return;
    }
    owned_.clear();
    for (int from : rp.in_link())
      while (rp.incoming(from)) {
        const auto v = rp.dequeue<std::vector<Synapse>>(from);
        owned_.insert(owned_.end(), v.begin(), v.end());
      }
    std::sort(owned_.begin(), owned_.end());
  }
  std::uint32_t count() const { return static_cast<std::uint32_t>(owned_.size()); }
  double weightSum() const {
    double w = 0;
    for (const Synapse& s : owned_) w += s.weight;
    return w;
  }
  std::vector<std::uint32_t> sources() const {
    std::vector<std::uint32_t> v;
    for (const Synapse& s : owned_) v.push_back(s.source);
    return v;
  }
  std::vector<std::uint32_t> targets() const {
    std::vector<std::uint32_t> v;
    for (const Synapse& s : owned_) v.push_back(s.target);
    return v;
  }
  static const Cinfo* initCinfo() {
    static const Cinfo* c =
        ClassBuilder<SynapseBlock>("SynapseBlock", "synapses, owned by the block of their target")
            .readOnly("count", &SynapseBlock::count, "synapses this block owns")
            .readOnly("weightSum", &SynapseBlock::weightSum, "their weights' sum, in order")
            .readOnly("sources", &SynapseBlock::sources, "their sources, by (target, source)")
            .readOnly("targets", &SynapseBlock::targets, "their targets, in the same order")
            .proc<&SynapseBlock::process, &SynapseBlock::reinit>()
            .blocks("gather", &SynapseBlock::gather, "all_to_all: synapses to their target's block")
            .build();
    return c;
  }

 private:
  std::vector<Synapse> made_, owned_;
};

static const Cinfo* registered = SynapseBlock::initCinfo();

int main(int argc, char** argv) {
  Runtime rt(argc, argv);
  Shell& s = rt.shell();
  const ObjId b = s.create("SynapseBlock", "/owners", kBlocks);
  s.useClock(0, "/owners");
  s.reinit();
  s.allToAll("/owners", "gather", 3);

  // Serially: every synapse, to the block of its target, sorted there.
  std::vector<std::vector<Synapse>> serial(kBlocks);
  for (int g = 0; g < kBlocks; ++g)
    for (const Synapse& x : made_by(g)) serial[x.target / kPerBlock].push_back(x);
  bool ok = true;
  std::printf("antler block rounds: %d synapses over %d blocks, %d node(s), %u thread(s)\n",
              kBlocks * kMade, kBlocks, s.numNodes(), s.numThreads());
  std::printf("result: synapses per block");
  for (int g = 0; g < kBlocks; ++g) {
    auto& want = serial[static_cast<std::size_t>(g)];
    std::sort(want.begin(), want.end());
    const ObjId o(b.id, static_cast<Index>(g));
    const auto src = Field<std::vector<std::uint32_t>>::get(s, o, "sources");
    const auto tgt = Field<std::vector<std::uint32_t>>::get(s, o, "targets");
    ok = ok && src.size() == want.size() && tgt.size() == want.size();
    for (std::size_t i = 0; ok && i < want.size(); ++i)
      ok = src[i] == want[i].source && tgt[i] == want[i].target;
    double w = 0;
    for (const Synapse& x : want) w += x.weight;
    ok = ok && Field<double>::get(s, o, "weightSum") == w;
    std::printf(" %u", Field<std::uint32_t>::get(s, o, "count"));
  }
  std::printf("\ncheck against a serial redistribution: %s\n", ok ? "OK" : "MISMATCH");
  return rt.finish(ok ? 0 : 1);
}
