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

/// The longest delay among each local object's synapses: out[i] for e's i-th local object, whose
/// array is *arrays[i] (its `synapse` field), 0 for none. Read without rebuilding the addresses of
/// arrays that dropped them between runs (core/edge_array.hpp): those hold only slots of the
/// Sparse messages into the field, whose live slots are read in message order instead.
std::vector<double> longest_delays(const DataElement* e,
                                   const std::vector<const EdgeArray<Synapse>*>& arrays);

/// What a Sparse message's delivery may skip for addSpike (see core/dest_finfo.hpp).
template <>
struct DestPrefetch<&Synapse::addSpike> {
  /// addSpike appends to its parent Element's queues (models/step_queues.hpp): it reads neither
  /// the parent object nor, so, anything worth fetching ahead.
  static constexpr bool kParent = false;
  /// addSpike reads its Eref's parent index only: the message keeps no field indices for it.
  static constexpr bool kFieldIndex = false;
};

/// The synapses of an IntFire or a SimpleSynHandler take a row's run of live slots in one call
/// (IntFire::addEvents, SimpleSynHandler::addEvents: the queues and the thread's found once, not
/// per event).
template <>
struct DestRun<&Synapse::addSpike> {
  static bool accepts(const Element* dest);
  static void call(const Element* dest, const Index* data, const Synapse* objs, std::size_t n,
                   double time);
};

}  // namespace antler
#pragma GCC visibility pop
