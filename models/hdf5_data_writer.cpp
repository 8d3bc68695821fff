#include "models/hdf5_data_writer.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <system_error>
#include <vector>

#include "core/element.hpp"
#include "models/detail/hdf5.hpp"
#include "msg/msg.hpp"
#include "reduce/reduce_queue.hpp"

namespace antler {

namespace {

constexpr const char* kWho = "HDF5DataWriter";

template <class H>
H checked(H h, const std::string& file, const std::string& what) {
  return hdf5::checked(h, kWho, file, what);
}

/// MOOSE's name of object (d, f) of e: every part of the path with an index, the ancestors'
/// [0] (an antler Element's parent is a whole Element), e.g. /model[0]/c[3] or /n[2]/synapse[5].
std::string moose_path(const Element* e, Index d, Index f) {
  const std::string p = e->path();
  std::vector<std::string> parts;
  for (std::size_t i = 1, j; i <= p.size(); i = j + 1) {
    j = p.find('/', i);
    if (j == std::string::npos) j = p.size();
    if (j > i) parts.push_back(p.substr(i, j - i));
  }
  std::string out;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    Index idx = 0;
    if (e->isField()) {
      if (k + 2 == parts.size()) idx = d;
      if (k + 1 == parts.size()) idx = f;
    } else if (k + 1 == parts.size()) {
      idx = d;
    }
    out += "/" + parts[k] + "[" + std::to_string(idx) + "]";
  }
  return out;
}

}  // namespace

struct HDF5DataWriter::State {
  struct Dataset {
    std::string path;
    hid_t ds = -1;
    std::vector<double> buf;  // values not yet written, one per step
  };
  struct Channel {  // one requestOut message: datasets [first, first + count)
    std::uint32_t msgId;
    std::size_t first, count;
    bool gone = false;  // the message was deleted after reinit: its datasets get NaN
  };
  std::string file;
  hid_t fid = -1;
  std::vector<Dataset> sets;
  std::vector<Channel> channels;  // sorted by msgId
  std::size_t delivered = 0;      // channels stored for the step being filled
  std::uint64_t waiting = 0;      // steps buffered
  std::string error;              // a failure in store(), raised by the next process

  ~State() { closeHandles(); }
  void closeHandles() {
    hdf5::Quiet q;
    for (auto& s : sets)
      if (s.ds >= 0) H5Dclose(s.ds), s.ds = -1;
    if (fid >= 0) H5Fclose(fid), fid = -1;
  }
  /// Appends every dataset's waiting values.
  void write() {
    if (waiting == 0) return;
    hdf5::Quiet q;
    for (auto& s : sets) {
      hid_t fs = checked(H5Dget_space(s.ds), file, "read the dataspace of " + s.path);
      hsize_t size = static_cast<hsize_t>(H5Sget_simple_extent_npoints(fs));
      H5Sclose(fs);
      const hsize_t grown = size + s.buf.size();
      checked(H5Dset_extent(s.ds, &grown), file, "extend " + s.path);
      fs = checked(H5Dget_space(s.ds), file, "read the dataspace of " + s.path);
      const hsize_t count = s.buf.size();
      H5Sselect_hyperslab(fs, H5S_SELECT_SET, &size, nullptr, &count, nullptr);
      hid_t ms = H5Screate_simple(1, &count, nullptr);
      const herr_t rc = H5Dwrite(s.ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, s.buf.data());
      H5Sclose(ms);
      H5Sclose(fs);
      checked(rc, file, "write " + s.path);
      s.buf.clear();
    }
    waiting = 0;
  }
};

HDF5DataWriter::HDF5DataWriter() = default;

HDF5DataWriter::~HDF5DataWriter() {
  try {
    close();
  } catch (...) {  // a destructor cannot report; close() from the script does
  }
}

bool HDF5DataWriter::isOpen() const {
  return st_ && st_->fid >= 0;
}

void HDF5DataWriter::setFilename(const std::string& f) {
  // The open file, if any, stays the one being written until reinit or close.
  filename_ = hdf5::valid_filename("HDF5DataWriter", f);
}

void HDF5DataWriter::setMode(unsigned m) {
  if (m != 1 && m != 2 && m != 4)
    throw ValueError(
        "HDF5DataWriter.mode: " + std::to_string(m) +
        " is no mode (valid: 1 append to an existing file, 2 replace it, 4 refuse it)");
  mode_ = m;
}

void HDF5DataWriter::setChunkSize(unsigned n) {
  if (n == 0) throw ValueError("HDF5DataWriter.chunkSize: must be at least 1 (values per chunk)");
  chunkSize_ = n;
}

void HDF5DataWriter::setCompressor(const std::string& c) {
  std::string lower = c;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (lower != "zlib" && lower != "szip" && lower != "none" && !lower.empty())
    throw ValueError("HDF5DataWriter.compressor: " + antler::quoted(c) +
                     " is no compressor (valid: 'zlib', 'szip', 'none')");
  compressor_ = lower.empty() ? "none" : lower;
}

void HDF5DataWriter::setCompression(unsigned level) {
  if (level > 9)
    throw ValueError("HDF5DataWriter.compression: " + std::to_string(level) +
                     " is no zlib level (valid: 0 to 9)");
  compression_ = level;
}

void HDF5DataWriter::setFlushLimit(unsigned n) {
  if (n == 0) throw ValueError("HDF5DataWriter.flushLimit: must be at least 1 (steps buffered)");
  flushLimit_ = n;
}

void HDF5DataWriter::flush() {
  if (!isOpen()) return;
  st_->write();
  hdf5::write_attributes(st_->fid, attrs_, kWho, st_->file);
  hdf5::Quiet q;
  checked(H5Fflush(st_->fid, H5F_SCOPE_GLOBAL), st_->file, "flush the file");
}

void HDF5DataWriter::close() {
  if (!st_) return;
  std::unique_ptr<State> st = std::move(st_);
  if (st->fid >= 0) {
    st->write();
    hdf5::write_attributes(st->fid, attrs_, kWho, st->file);
  }
  st->closeHandles();
}

void HDF5DataWriter::reinit(const Eref& e, ProcPtr) {
  close();
  steps_ = 0;
  const std::string who = std::string(kWho) + " " + e.element()->path();
  if (e.element()->isGlobal())
    throw ValueError(who + ": a writer must not be global (every node would write the file)");
  const std::vector<const ReduceMsg*> msgs = requestOut.messagesOf(e);
  if (msgs.empty()) return;  // nothing recorded: no file, as in MOOSE
  if (compressor_ == "szip" && H5Zfilter_avail(H5Z_FILTER_SZIP) <= 0)
    throw ValueError(who + ": this HDF5 library has no szip encoder (compressor 'zlib' or 'none')");
  std::unique_ptr<State> st = plan(msgs, who);
  openFile(*st, who);
  makeDatasets(*st);
  for (auto& set : st->sets) set.buf.reserve(std::min<std::size_t>(flushLimit_, 1024));
  st_ = std::move(st);
}

std::unique_ptr<HDF5DataWriter::State> HDF5DataWriter::plan(
    const std::vector<const ReduceMsg*>& msgs, const std::string& who) const {
  // The messages in id order, each one's objects in index order: one dataset per object.
  auto st = std::make_unique<State>();
  st->file = filename_;
  std::set<std::string> seen;
  for (const ReduceMsg* m : msgs) {
    const Element* d = m->dest();
    std::string var = m->getter()->name();
    var[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(var[0])));
    State::Channel ch{m->id(), st->sets.size(), 0};
    auto add = [&](Index data, Index field) {
      std::string path = moose_path(d, data, field) + "/" + var;
      if (!seen.insert(path).second)
        throw ValueError(who + ": records " + path +
                         " twice (two requestOut messages reach the same object and field)");
      st->sets.push_back(State::Dataset{std::move(path), -1, {}});
    };
    if (m->isSingle()) {
      const Target t = m->singleTarget();
      add(t.data, t.field);
    } else {
      for (Index i = 0; i < d->numData(); ++i) add(i, 0);
    }
    ch.count = st->sets.size() - ch.first;
    st->channels.push_back(ch);
  }
  return st;
}

void HDF5DataWriter::openFile(State& st, const std::string& who) const {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool exists = fs::exists(filename_, ec);
  if (exists && mode_ == 4)
    throw ValueError(who + ": the file '" + filename_ +
                     "' exists (mode 4 refuses it: set mode = 1 to append to it, 2 to replace it)");
  const fs::path parent = fs::path(filename_).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    throw ValueError(who + ": cannot create file '" + filename_ + "': the folder '" +
                     parent.string() + "' does not exist");
  hdf5::Quiet quiet;
  errno = 0;
  const bool append = exists && mode_ == 1;
  st.fid = append ? H5Fopen(filename_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)
                  : H5Fcreate(filename_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (st.fid < 0) {
    const int err = errno;
    throw ValueError(who + ": cannot " + (append ? "open" : "create") + " file '" + filename_ +
                     "'" + (err ? std::string(": ") + std::strerror(err) : ""));
  }
}

void HDF5DataWriter::makeDatasets(State& st) const {
  // Appending, a dataset already in the file grows; the others are made: 1-D, extendible,
  // chunked, compressed as asked, their groups made along their paths.
  hdf5::Quiet quiet;
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  const hsize_t chunk = chunkSize_;
  H5Pset_chunk(dcpl, 1, &chunk);
  if (compressor_ == "zlib") H5Pset_deflate(dcpl, compression_);
  if (compressor_ == "szip") H5Pset_szip(dcpl, H5_SZIP_NN_OPTION_MASK, 32);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  for (auto& s : st.sets) {
    if (H5Lexists(st.fid, s.path.c_str(), H5P_DEFAULT) > 0) {
      s.ds = H5Dopen2(st.fid, s.path.c_str(), H5P_DEFAULT);
    } else {
      const hsize_t dims = 0, maxd = H5S_UNLIMITED;
      hid_t sp = H5Screate_simple(1, &dims, &maxd);
      s.ds = H5Dcreate2(st.fid, s.path.c_str(), H5T_IEEE_F64LE, sp, lcpl, dcpl, H5P_DEFAULT);
      H5Sclose(sp);
    }
    if (s.ds < 0) break;
  }
  H5Pclose(lcpl);
  H5Pclose(dcpl);
  for (auto& s : st.sets) checked(s.ds, filename_, "make the dataset " + s.path);
}

void HDF5DataWriter::process(const Eref& e, ProcPtr) {
  if (!st_) return;  // nothing recorded (MOOSE: no file handle)
  State& s = *st_;
  if (!s.error.empty()) {
    std::string msg = std::move(s.error);
    s.error.clear();
    throw ValueError(std::string(kWho) + " " + e.element()->path() + ": " + msg);
  }
  // A message deleted since reinit is not asked for: its datasets get NaN from this step on,
  // and the rest is recorded.
  const std::size_t live = requestOut.ask(s.channels, e, [&](const State::Channel& ch) {
    for (std::size_t k = 0; k < ch.count; ++k)
      s.sets[ch.first + k].buf.push_back(std::numeric_limits<double>::quiet_NaN());
    ++s.delivered;
  });
  if (live == 0) completeStep();
}

void HDF5DataWriter::store(const Eref&, std::uint32_t msgId, const GatherValues& g) {
  if (!st_) return;
  State& s = *st_;
  auto it =
      std::lower_bound(s.channels.begin(), s.channels.end(), msgId,
                       [](const State::Channel& c, std::uint32_t id) { return c.msgId < id; });
  if (it == s.channels.end() || it->msgId != msgId) return;  // a message added after reinit
  if (g.values.size() != it->count) {
    s.error = "message " + std::to_string(msgId) + " gathered " + std::to_string(g.values.size()) +
              " values for " + std::to_string(it->count) + " objects";
    return;
  }
  for (std::size_t k = 0; k < it->count; ++k) s.sets[it->first + k].buf.push_back(g.values[k]);
  if (++s.delivered == s.channels.size()) completeStep();
}

void HDF5DataWriter::completeStep() {
  State& s = *st_;
  s.delivered = 0;
  ++steps_;
  if (++s.waiting >= flushLimit_) {
    try {
      s.write();
    } catch (const std::exception& ex) {
      s.error = ex.what();
    }
  }
}

const Cinfo* HDF5DataWriter::initCinfo() {
  static const Cinfo* c = [] {
    ClassBuilder<HDF5DataWriter> b(
        "HDF5DataWriter",
        "records number fields into an HDF5 file, one dataset per object and field (MOOSE's)");
    b.value("filename", &HDF5DataWriter::filename, &HDF5DataWriter::setFilename,
            "the HDF5 file (opened at reinit; default moose_output.h5)")
        .value("mode", &HDF5DataWriter::mode, &HDF5DataWriter::setMode,
               "for an existing file: 1 append, 2 replace, 4 refuse (default)")
        .value("chunkSize", &HDF5DataWriter::chunkSize, &HDF5DataWriter::setChunkSize,
               "values per chunk of a dataset (default 1024)")
        .value("compressor", &HDF5DataWriter::compressor, &HDF5DataWriter::setCompressor,
               "'zlib' (default), 'szip' or 'none'")
        .value("compression", &HDF5DataWriter::compression, &HDF5DataWriter::setCompression,
               "zlib level, 0 to 9 (default 6)")
        .value("flushLimit", &HDF5DataWriter::flushLimit, &HDF5DataWriter::setFlushLimit,
               "steps kept in memory before the datasets grow (default 4194304)");
    Hdf5Attributes::addFields(b, &HDF5DataWriter::attrs_, kWho);
    return b.readOnly("isOpen", &HDF5DataWriter::isOpen, "true while the file is open")
        .readOnly("steps", &HDF5DataWriter::steps, "steps recorded since reinit")
        .dest<&HDF5DataWriter::flush>("flush", "writes what waits; the file stays open")
        .dest<&HDF5DataWriter::close>("close", "writes what waits and closes the file")
        .reduce(HDF5DataWriter::requestOut)
        .proc<&HDF5DataWriter::process, &HDF5DataWriter::reinit>()
        .defaultTick(30)  // MOOSE's default tick for HDF5DataWriter
        .build();
  }();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = HDF5DataWriter::initCinfo();
}

}  // namespace antler
