#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// HDF5DataWriter: MOOSE's plain recorder of value fields into an HDF5 file, one 1-D dataset per
/// recorded object and field (MOOSE's HDF5DataWriter, builtins/HDF5DataWriter.cpp).
///
///   h = HDF5DataWriter('/h'); h.filename = 'out.h5'; h.mode = 2     (2: replace a file)
///   connect(h, 'requestOut', comp, 'getVm')                  one object's Vm (Single)
///   connect(h, 'requestOut', neurons, 'getVm', 'Reduce')     every entry's Vm
///   reinit(); start(T); h.close()
///
/// Each message on `requestOut` reads a number field (stored as float64) of one object (Single)
/// or of every entry of an Element (Reduce; models/gather_request.hpp: in index order on any
/// split, through the reduce path to the node that holds the writer). Each time the writer's tick
/// runs (not at reinit, as in MOOSE) every recorded object's value is appended to the dataset
/// `<object path>/<field>`, named as MOOSE names it: the object's path with an index on every
/// part (`/model[0]/c[0]/vm` for Vm of /model/c), the field with its first letter in lower case.
/// Values wait in memory for flushLimit steps (MOOSE's default 4M), then each dataset grows by a
/// block; flush() and close() write what waits.
///
/// The file opens at reinit when something is recorded (a writer with no requestOut message
/// opens none, as in MOOSE). mode: 1 appends to an existing file (its datasets grow), 2 replaces
/// it, 4 (the default) refuses one (a ValueError: MOOSE prints an error and records nothing).
/// Datasets are chunked (chunkSize values, default 1024) and compressed by `compressor` ("zlib",
/// the default, at level `compression`, default 6; "szip" if this HDF5 has it; "none").
/// Attributes: stringAttr, doubleAttr, longAttr and their Vec forms (models/hdf5_attributes.hpp),
/// written at the next flush or close. The file closes at close(), at the next reinit and when the
/// writer is deleted; read it after that.
///
/// Differences from MOOSE (README): bad settings are errors, not messages on stderr (an existing
/// file in mode 4, an unknown compressor, a level above 9, the same object and field recorded
/// twice, which MOOSE writes interleaved into one dataset); an object deleted during a recording
/// is no longer read, its dataset gets NaN from then on.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/class_builder.hpp"
#include "models/gather_request.hpp"
#include "models/hdf5_attributes.hpp"

namespace antler {

class HDF5DataWriter {
 public:
  static constexpr const char* kClassName = "HDF5DataWriter";
  HDF5DataWriter();
  ~HDF5DataWriter();
  HDF5DataWriter(const HDF5DataWriter&) = delete;
  HDF5DataWriter& operator=(const HDF5DataWriter&) = delete;

  /// Reads a number field of the objects it is connected to (Single: one; Reduce: every entry).
  inline static GatherRequestFinfo<HDF5DataWriter> requestOut{
      "requestOut",
      "records a number field: Single message to one object's 'get' field, or Reduce message to "
      "every entry of an Element's"};

  /// Asks for this step's values.
  void process(const Eref& e, ProcPtr p);
  /// Closes any open file, opens the file by mode and makes (or, appending, opens) the datasets.
  void reinit(const Eref& e, ProcPtr p);
  /// Stores one message's gathered values (called by requestOut's jobs).
  void store(const Eref& e, std::uint32_t msgId, const GatherValues& g);
  /// Writes what waits, and the attributes (the file stays open).
  void flush();
  /// Writes what waits and closes the file.
  void close();
  bool isOpen() const;

  static const Cinfo* initCinfo();
  struct State;  // the open file and its buffers (hdf5_data_writer.cpp)

 private:
  std::string filename_ = "moose_output.h5";  // MOOSE's default
  unsigned mode_ = 4;                         // MOOSE's default: refuse an existing file
  unsigned chunkSize_ = 1024;
  std::string compressor_ = "zlib";
  unsigned compression_ = 6;
  unsigned flushLimit_ = 4u * 1024 * 1024;  // steps buffered (MOOSE's default)
  std::uint64_t steps_ = 0;                 // steps recorded since reinit
  Hdf5Attributes attrs_;
  std::unique_ptr<State> st_;

  const std::string& filename() const { return filename_; }
  unsigned mode() const { return mode_; }
  unsigned chunkSize() const { return chunkSize_; }
  const std::string& compressor() const { return compressor_; }
  unsigned compression() const { return compression_; }
  unsigned flushLimit() const { return flushLimit_; }
  void setFilename(const std::string& f);
  void setMode(unsigned m);
  void setChunkSize(unsigned n);
  void setCompressor(const std::string& c);
  void setCompression(unsigned level);
  void setFlushLimit(unsigned n);
  unsigned steps() const { return static_cast<unsigned>(steps_); }
  void completeStep();
  // reinit's steps: what is recorded (a dataset per object), the file by mode, the datasets.
  std::unique_ptr<State> plan(const std::vector<const ReduceMsg*>& msgs,
                              const std::string& who) const;
  void openFile(State& st, const std::string& who) const;
  void makeDatasets(State& st) const;
};

}  // namespace antler
#pragma GCC visibility pop
