#include "reduce/detail/sync_data_handler.hpp"

#include "reduce/context.hpp"
#include "reduce/reduce_field_dimension.hpp"
#include "reduce/reduce_finfo.hpp"

namespace antler {

namespace {

/// Reduction job over the parents of a FieldElement: no ReduceMsg, the FieldElement asks itself.
class FieldDimensionJob final : public detail::TypedReduceJob<ReduceFieldDimension> {
 public:
  explicit FieldDimensionJob(FieldElement* fe) : fe_(fe) {}
  std::uint64_t id() const override { return 0xF1E1D000000000ull | fe_->id().value; }
  void primary(unsigned t, unsigned T) override {
    auto [lo, hi] = thread_slice(fe_, t, T);
    ReduceFieldDimension& r = partials_[t].r;
    r = ReduceFieldDimension{};
    for (Index d = lo; d < hi; ++d) r.primaryReduce(fe_->numField(d));
  }
  // The digest runs on every node: each holds the FieldElement's metadata.
  int resultNode() const override { return -1; }
  void digest() override { fe_->setFieldDimension(result_.maxIndex()); }

 private:
  FieldElement* fe_;
};

}  // namespace

Index sync_data_handler(FieldElement* fe, unsigned numThreads) {
  FieldDimensionJob job(fe);
  reduce_context(*fe).reduces().runNow({&job}, numThreads);
  return fe->fieldDimension();
}

}  // namespace antler
