#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Synapse: one entry of an IntFire's `synapse` field element (MOOSE's Synapse). A spike arriving
/// at addSpike(time) schedules `weight` to be added to the parent IntFire's Vm at time + delay.
/// Synapses have no data element of their own: connect spike sources to the FieldElement
/// `<neurons>/synapse`, e.g. with a Sparse message (which also sizes each neuron's synapse array).
#include "core/class_builder.hpp"
#include "core/export.hpp"

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

/// CompactSynapse: a Synapse in 8 bytes, for networks whose synapses are most of their memory:
/// weight and delay held in single precision (a float each), where Synapse holds two doubles.
/// An entry of an IntFire's or a SimpleSynHandler's `compactSynapse` field (numCompactSynapses),
/// beside its `synapse` field: both feed the same object, and a network may use either or both.
///
/// A weight set is rounded to the nearest float (IEEE round to nearest even), a delay toward zero
/// (so that a delay of whole steps, k x dt in doubles, stays due in step k: rounded up it could
/// pass the due step's slack), and they read back rounded; a finite value beyond a float's range
/// (|v| > 3.4028235e38) is an error that leaves the synapse unchanged. Otherwise it is a Synapse:
/// addSpike(time) schedules double(weight) at time + double(delay), with the same arithmetic, so a
/// network of CompactSynapses gives the bits of the same network of Synapses whose weights and
/// delays are those rounded values. (NEST's 4g/5g kernels store a static synapse in 16 bytes with
/// the target; here the synapse is 8 and the Sparse message's column 4.)
class CompactSynapse {
 public:
  /// Schedules weight on the parent IntFire or SimpleSynHandler at time + delay (e must be an
  /// entry of its compactSynapse field).
  void addSpike(const Eref& e, double time);
  /// Time from spike to effect (as a float holds it).
  double delay() const { return delay_; }
  /// Added to the parent's Vm per spike (as a float holds it).
  double weight() const { return weight_; }
  void setDelay(double v);
  void setWeight(double v);
  static const Cinfo* initCinfo();

 private:
  float weight_ = 1.0f;  // Synapse's defaults
  float delay_ = 0.0f;
};
static_assert(sizeof(CompactSynapse) == 8);

/// The longest delay among each local object's synapses: out[i] for e's i-th local object, whose
/// array is *arrays[i] (its field `field`), 0 for none. Read without rebuilding the addresses of
/// arrays that dropped them between runs (core/edge_array.hpp): those hold only slots of the
/// Sparse messages into the field, whose live slots are read in message order instead.
/// (F: Synapse or CompactSynapse.)
template <class F>
ANTLER_API std::vector<double> longest_delays(const DataElement* e,
                                              const std::vector<const EdgeArray<F>*>& arrays,
                                              const char* field = "synapse");
extern template std::vector<double> longest_delays(const DataElement*,
                                                   const std::vector<const EdgeArray<Synapse>*>&,
                                                   const char*);
extern template std::vector<double> longest_delays(
    const DataElement*, const std::vector<const EdgeArray<CompactSynapse>*>&, const char*);

/// The longest delay among the synapses of all of e's local objects (arrays and field as for
/// longest_delays), 0 for none: the maximum of longest_delays, for a class that needs one figure
/// for the node (IntFire's queues). Where arrays have dropped their addresses it reads each
/// Sparse store into the field in slot order, one pass that need not know whose entry a slot is
/// (longest_delays walks the message's rows to tell the objects apart).
template <class F>
ANTLER_API double longest_delay(const DataElement* e,
                                const std::vector<const EdgeArray<F>*>& arrays,
                                const char* field = "synapse");
extern template double longest_delay(const DataElement*,
                                     const std::vector<const EdgeArray<Synapse>*>&, const char*);
extern template double longest_delay(const DataElement*,
                                     const std::vector<const EdgeArray<CompactSynapse>*>&,
                                     const char*);

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

/// As Synapse's: addSpike reads neither the parent object nor its field index.
template <>
struct DestPrefetch<&CompactSynapse::addSpike> {
  static constexpr bool kParent = false;
  static constexpr bool kFieldIndex = false;
};

/// The compact synapses of an IntFire or a SimpleSynHandler take a row's run of live slots in one
/// call (IntFire::addEvents, SimpleSynHandler::addEvents), as their Synapses do.
template <>
struct DestRun<&CompactSynapse::addSpike> {
  static bool accepts(const Element* dest);
  static void call(const Element* dest, const Index* data, const CompactSynapse* objs,
                   std::size_t n, double time);
};

}  // namespace antler
#pragma GCC visibility pop
