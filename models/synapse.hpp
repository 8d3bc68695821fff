#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Synapse: one entry of an IntFire's `synapse` field element (MOOSE's Synapse). A spike arriving
/// at addSpike(time) schedules `weight` to be added to the parent IntFire's Vm at time + delay.
/// Synapses have no data element of their own: connect spike sources to the FieldElement
/// `<neurons>/synapse`, e.g. with a Sparse message (which also sizes each neuron's synapse array).
#include "core/class_builder.hpp"

namespace antler {

class Synapse {
 public:
  /// Schedules weight on the parent IntFire at time + delay (e must be an IntFire's synapse entry).
  void addSpike(const Eref& e, double time);
  /// Time from spike to effect.
  double delay() const { return delay_; }
  /// Added to the parent's Vm per spike.
  double weight() const { return weight_; }
  /// The class info of Synapse (registered at load time).
  static const Cinfo* initCinfo();

 private:
  double weight_ = 1.0;  // MOOSE's default
  double delay_ = 0.0;
};

/// Fetches the entry of a SimpleSynHandler's ring that addSpike will add to (see
/// core/dest_finfo.hpp; an IntFire's events are appended to a queue, which needs no fetch);
/// addSpike does not read the parent object itself, so it is not fetched.
template <>
struct DestPrefetch<&Synapse::addSpike> {
  static constexpr bool kParent = false;
  /// addSpike reads its Eref's parent index only: the message keeps no field indices for it.
  static constexpr bool kFieldIndex = false;
  /// Only a SimpleSynHandler's ring slot is worth fetching (an IntFire appends to a queue).
  static bool active(const Element* dest);
  static void fetch(const Eref& e, const Synapse& s, double time);
};

/// An IntFire's synapses take a row's run of live slots in one call (IntFire::addEvents: its
/// queues and the thread's found once, not per event); a SimpleSynHandler's go one by one.
template <>
struct DestRun<&Synapse::addSpike> {
  static bool accepts(const Element* dest);
  static void call(const Element* dest, const Index* data, const Synapse* objs, std::size_t n,
                   double time);
};

}  // namespace antler
#pragma GCC visibility pop
