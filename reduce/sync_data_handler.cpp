#include "reduce/sync_data_handler.hpp"

#include "reduce/reduce_field_dimension.hpp"
#include "reduce/reduce_finfo.hpp"
#include "reduce/reduce_queue.hpp"

namespace antler {

namespace {

/// Reduction job over the parents of a FieldElement: no ReduceMsg, the FieldElement asks itself.
class FieldDimensionJob final : public ReduceBase {
 public:
  explicit FieldDimensionJob(FieldElement* fe) : fe_(fe) {}
  std::uint64_t id() const override { return 0xF1E1D000000000ull | fe_->id().value; }
  void reset(unsigned T) override { partials_.assign(T, detail::Partial<ReduceFieldDimension>{}); }
  void primary(unsigned t, unsigned T) override {
    auto [lo, hi] = thread_slice(fe_, t, T);
    partials_[t].r = ReduceFieldDimension{};
    for (Index d = lo; d < hi; ++d) partials_[t].r.primaryReduce(fe_->numField(d));
  }
  void secondary() override {
    for (std::size_t t = 1; t < partials_.size(); ++t)
      partials_[0].r.secondaryReduce(partials_[t].r);
  }
  void save(Writer& w) const override { w.put(partials_[0].r); }
  void tertiary(std::vector<Reader>& nodes) override {
    result_ = nodes[0].get<ReduceFieldDimension>();
    for (std::size_t n = 1; n < nodes.size(); ++n)
      result_.tertiaryReduce(nodes[n].get<ReduceFieldDimension>());
  }
  void finishLocal() override { result_ = partials_[0].r; }
  // The digest runs on every node: each holds the FieldElement's metadata.
  void digest() override { fe_->setFieldDimension(result_.maxIndex()); }

 private:
  FieldElement* fe_;
  std::vector<detail::Partial<ReduceFieldDimension>> partials_;
  ReduceFieldDimension result_;
};

}  // namespace

Index sync_data_handler(FieldElement* fe, unsigned numThreads) {
  FieldDimensionJob job(fe);
  ReduceQueue::instance().runNow({&job}, numThreads);
  return fe->fieldDimension();
}

}  // namespace antler
