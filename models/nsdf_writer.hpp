#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// NSDFWriter: streams recorded values into an HDF5 file laid out as NSDF (the Neuroscience
/// Simulation Data Format, Ray et al. 2016), as MOOSE's NSDFWriter does.
///
///   w = NSDFWriter('/rec'); w.filename = 'run.h5'       (w.overwrite = True to replace a file)
///   connect(w, 'requestOut', neurons, 'getVm', 'Reduce')      every neuron's Vm
///   connect(w, 'requestOut', ObjId(comp, 3), 'getIm', 'Single') one object's Im
///   m = connect(neurons, 'spikeOut', '/rec/eventInput', 'input', 'Sparse')
///   m.pairFill(range(N), [0] * N)                             spike times of every neuron
///   useClock(k, '/rec'); reinit(); start(T); w.close()
///
/// Uniform data. Each message on `requestOut` reads one value field (any arithmetic type, stored
/// as float64) of every entry of an Element (a Reduce message) or of one object (Single). Every
/// time the writer's tick runs (and once at reinit, as a Table does) the values are gathered in
/// global index order through the reduce path to the node that holds the writer, so the file is
/// the same whatever the node and thread counts. They fill a buffer of at most flushLimit values
/// that is written as one block (a hyperslab of every row) when full, on flush() and on close().
/// Rows of one field of one Element form /data/uniform/<population>/<field> (float64, objects x
/// time, attributes tstart, dt (the writer's tick dt), field, unit, timeunit); the object paths are
/// /map/uniform/<population> (variable-length strings, attached as the dimension scale 'source').
/// <population> is the Element's name (made unique with a suffix when two Elements share one or
/// when one Element's fields are recorded over different sets of objects).
///
/// Event data. The field element `eventInput` holds one entry per event source; its dest `input`
/// takes a time (connect any SrcFinfo<double>, e.g. IntFire.spikeOut, with a Sparse message
/// filled one source per entry, or a Single message per source). Times go to
/// /data/event/<population>/<srcField>/<dataIndex> (1D float64, attribute source; the group has
/// field and unit),
/// mapped by /map/event/<population>/<srcField> (compound: source path, data reference), NSDF's
/// ONED dialect. They are buffered with the uniform data and written in the same blocks.
///
/// The layout is fixed at reinit. An Element deleted during a recording (or a requestOut
/// message deleted) is no longer read: its rows hold NaN from the next sample on, and the rest
/// goes on being recorded; the next reinit starts a new file for the model as it is then.
///
/// The file is created at reinit (an existing file is an error unless overwrite is set; nothing
/// is created when the recording cannot start). Each flush leaves a valid file. close() (or
/// deleting the writer, or the next reinit) writes what is buffered and closes the file; read it
/// after that (HDF5 keeps a file open for writing locked).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/class_builder.hpp"
#include "models/gather_request.hpp"
#include "models/hdf5_attributes.hpp"

namespace antler {

/// One entry of NSDFWriter's `eventInput`: buffers the event times of one source.
class EventInput {
 public:
  /// Buffers an event time.
  void input(double t) { buf_.push_back(t); }
  /// Times buffered and not yet written.
  std::vector<double>& buffer() { return buf_; }
  /// The class info of EventInput (registered at load time).
  static const Cinfo* initCinfo();

 private:
  std::vector<double> buf_;
};

class NSDFWriter;
/// NSDFWriter.requestOut (models/gather_request.hpp).
using NSDFRequestFinfo = GatherRequestFinfo<NSDFWriter>;

class NSDFWriter {
 public:
  static constexpr const char* kClassName = "NSDFWriter";
  NSDFWriter();
  ~NSDFWriter();
  NSDFWriter(const NSDFWriter&) = delete;
  NSDFWriter& operator=(const NSDFWriter&) = delete;

  /// Reads any value field of the objects it is connected to (Reduce: every entry; Single: one).
  inline static NSDFRequestFinfo requestOut{
      "requestOut",
      "records a value field: Reduce message to every entry of an Element's 'get' field, or "
      "Single message to one object's"};

  /// Asks for this step's values; writes a block when the buffer is full.
  void process(const Eref& e, ProcPtr p);
  /// Closes any open file, creates the file, and asks for the initial values.
  void reinit(const Eref& e, ProcPtr p);
  /// Stores one gathered block of values (called by requestOut's jobs after the node stage).
  void store(const Eref& e, std::uint32_t msgId, const GatherValues& g);
  /// Writes what is buffered (the file stays open).
  void flush();
  /// Counts a sample whose values have all been stored; writes a block when the buffer is full.
  void completeColumn();
  /// Writes what is buffered and closes the file.
  void close();

  const std::string& filename() const { return filename_; }
  void setFilename(const std::string& f);
  unsigned flushLimit() const { return flushLimit_; }
  void setFlushLimit(unsigned n);
  /// Samples (columns) recorded since reinit, written or not.
  unsigned samples() const { return static_cast<unsigned>(samples_); }
  /// True while a file is open.
  bool isOpen() const;
  /// MOOSE's mode: 2 replaces an existing file (overwrite = true), 4 refuses one (the default);
  /// 1 (append to an existing file) is not supported: a ValueError.
  unsigned mode() const { return overwrite_ ? 2u : 4u; }
  void setMode(unsigned m);
  /// Files whose text is stored in the file, as string attributes of /model/modelfile named by
  /// each file's name (comma- or space-separated, as MOOSE); each must exist when set.
  std::string modelFileNames() const;
  void setModelFileNames(std::string names);
  /// The class info of NSDFWriter (registered at load time).
  static const Cinfo* initCinfo();

  struct State;  // the open file and its buffers (nsdf_writer.cpp)

 private:
  std::string filename_;
  bool overwrite_ = false;
  unsigned flushLimit_ = 1u << 22;  // values (doubles) buffered before a block is written: 32 MiB
  std::uint64_t samples_ = 0;
  std::vector<EventInput> eventInputs_;
  std::vector<std::string> modelFiles_;
  std::unique_ptr<State> st_;
  // MOOSE's attributes (stringAttr, doubleAttr, ...: models/hdf5_attributes.hpp), written when
  // the file is flushed or closed.
  Hdf5Attributes attrs_;
  void writeAttrs();
};

}  // namespace antler
#pragma GCC visibility pop
