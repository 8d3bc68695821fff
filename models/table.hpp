#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Table: records a value every step (MOOSE's Table). Two ways to feed it:
///   - pull: connect its reduce field `requestOut` with a Single message to one object's 'get'
///     field, e.g. addMsg("Single", table, "requestOut", ObjId(comp, 3), "getVm"). Each process
///     (and reinit) asks for the value; the digest appends it, after the whole round's process,
///     so it records the value as this step left it.
///   - push: send values to its dest `input`, which appends each one as it is delivered.
/// reinit clears the vector, then (as in MOOSE) pulls once, so a pulling Table scheduled with its
/// target holds the initial value followed by one value per step: N + 1 values after N steps.
/// Sends delivered at reinit (e.g. a Compartment's VmOut) land after the clear when the sender is
/// on the same tick as the Table or an earlier one is not (schedule both on one tick).
#include <string>
#include <vector>

#include "core/class_builder.hpp"
#include "models/reduce_last.hpp"
#include "reduce/reduce_finfo.hpp"

namespace antler {

class Table {
 public:
  /// Appends the pulled value (declared before requestOut, which names it).
  void digest(const Eref& e, const ReduceLast<double>* r);
  /// Pulls one value per step from the object it is connected to (Single message to a get field).
  inline static ReduceFinfo<Table, double, ReduceLast<double>> requestOut{
      "requestOut", &Table::digest, "pulls a value each step: Single message to any 'get' field"};
  /// Asks for this step's value.
  void process(const Eref& e, ProcPtr p) {
    lastTime_ = p->currTime;
    requestOut.send(e);
  }
  /// Clears the vector, then asks for the initial value.
  void reinit(const Eref& e, ProcPtr);
  /// Appends a value sent to the Table.
  void input(double v) { vec_.push_back(v); }
  /// MOOSE's spike recording: when v rises above threshold (and had fallen below it since the
  /// last time), appends the time of the Table's last step (its last process or reinit), not v.
  /// Connected from a spikeOut (v is a spike time > 0), only the first spike counts, as in MOOSE:
  /// record spike times with `input` instead.
  void spike(double v);
  /// Writes the values to a file, one per line (18 significant digits, as MOOSE), then an empty
  /// line; an existing file is replaced.
  void plainPlot(const std::string& fname);
  /// Replaces the recorded values.
  void setVector(std::vector<double> v) { vec_ = std::move(v); }
  const std::vector<double>& vector() const { return vec_; }
  /// Empties the vector.
  void clearVec() { vec_.clear(); }
  /// Number of values recorded.
  unsigned size() const { return static_cast<unsigned>(vec_.size()); }
  /// The class info of Table (registered at load time).
  static const Cinfo* initCinfo();

 private:
  std::vector<double> vec_;
  double threshold_ = 0.0;
  double lastTime_ = 0.0;
  bool fired_ = false;
};

}  // namespace antler
#pragma GCC visibility pop
