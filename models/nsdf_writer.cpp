#include "models/nsdf_writer.hpp"

#include <hdf5.h>
#include <hdf5_hl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <system_error>

#include "models/detail/hdf5.hpp"
#include "msg/msg.hpp"
#include "reduce/context.hpp"
#include "reduce/reduce_finfo.hpp"

namespace antler {

namespace {

/// Units of MOOSE's usual fields (NSDF asks for a unit; antler's fields do not declare one).
std::string unit_of(const std::string& field) {
  static const std::map<std::string, std::string> units{{"Vm", "V"},
                                                        {"initVm", "V"},
                                                        {"Em", "V"},
                                                        {"thresh", "V"},
                                                        {"threshold", "V"},
                                                        {"vReset", "V"},
                                                        {"Im", "A"},
                                                        {"inject", "A"},
                                                        {"Cm", "F"},
                                                        {"Rm", "Ohm"},
                                                        {"Ra", "Ohm"},
                                                        {"tau", "s"},
                                                        {"refractoryPeriod", "s"},
                                                        {"refractT", "s"},
                                                        {"rate", "Hz"},
                                                        {"lastEvent", "s"},
                                                        {"spikeOut", "s"},
                                                        {"eventOut", "s"}};
  auto it = units.find(field);
  return it == units.end() ? std::string() : it->second;
}

std::string object_path(const Element* e, Index d) {
  return e->path() + "[" + std::to_string(d) + "]";
}

using QuietHdf5 = hdf5::Quiet;

/// Throws a ValueError naming the file and the failed step when an HDF5 call returned < 0.
template <class H>
H checked(H h, const std::string& file, const std::string& what) {
  return hdf5::checked(h, "NSDFWriter", file, what);
}

}  // namespace

const Cinfo* EventInput::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<EventInput>("EventInput", "one event source of an NSDFWriter (eventInput)")
          .dest<&EventInput::input>("input", "records an event time")
          .build();
  return c;
}

// ---- the open file and its buffers ----

namespace {
constexpr hsize_t kChunkValues = 1u << 17;  // values per chunk of a uniform dataset (1 MiB)
constexpr std::size_t kChunkCols = 64;      // the widest chunk, in steps
}  // namespace

struct NSDFWriter::State {
  struct Variable {  // one dataset /data/uniform/<pop>/<field>
    std::string pop, field;
    std::vector<std::string> sources;  // object paths, one per row
    Id element;
    hid_t ds = -1;
    std::vector<double> buf;  // block x rows: a step's values side by side (one copy per step)
    std::uint64_t written = 0;
    hsize_t chunkRows = 1;  // rows per chunk of the dataset
  };
  struct Channel {  // one requestOut message: rows [row, row + rows) of variable var
    std::uint32_t msgId;
    std::size_t var, row, rows;
    bool gone = false;  // the message was deleted (with its target) after reinit: rows read NaN
  };
  struct EventSource {  // one eventInput entry with its source
    Index entry;
    std::string pop, field, path, name;
    hid_t ds = -1;
    std::uint64_t written = 0;
  };
  std::string file;
  hid_t fid = -1;
  std::vector<Variable> vars;
  std::vector<Channel> channels;  // sorted by msgId
  std::vector<EventSource> events;
  std::size_t block = 1;      // columns per block
  std::size_t cols = 0;       // columns buffered
  std::vector<double> tile;   // writeUniform's transposed tile
  std::size_t delivered = 0;  // channels delivered for the column being filled
  double dt = 0;
  std::string error;  // a failure in store(), raised by the next process

  ~State() { closeHandles(); }
  void closeHandles() {
    QuietHdf5 q;
    for (auto& v : vars)
      if (v.ds >= 0) H5Dclose(v.ds), v.ds = -1;
    for (auto& ev : events)
      if (ev.ds >= 0) H5Dclose(ev.ds), ev.ds = -1;
    if (fid >= 0) H5Fclose(fid), fid = -1;
  }

  void writeUniform() {
    if (cols == 0) return;
    QuietHdf5 q;
    // The dataset is objects x time, the buffer time x objects (so that storing a step is one
    // contiguous copy, not a cache miss per object): transpose it a chunk's rows at a time (a
    // tile of about 1 MiB, which stays in cache) and write each tile as its own hyperslab,
    // which covers whole chunks when the block is full.
    for (auto& v : vars) {
      const hsize_t kTile = v.chunkRows;
      tile.resize(kTile * cols);
      const hsize_t rows = v.sources.size();
      const hsize_t ext[2] = {rows, v.written + cols};
      checked(H5Dset_extent(v.ds, ext), file, "extend a dataset");
      hid_t fs = checked(H5Dget_space(v.ds), file, "read a dataspace");
      herr_t rc = 0;
      for (hsize_t r0 = 0; r0 < rows && rc >= 0; r0 += kTile) {
        const hsize_t nr = std::min(kTile, rows - r0);
        for (hsize_t c = 0; c < cols; ++c) {
          const double* from = v.buf.data() + c * rows + r0;
          for (hsize_t r = 0; r < nr; ++r) tile[r * cols + c] = from[r];
        }
        const hsize_t start[2] = {r0, v.written}, count[2] = {nr, cols};
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
        hid_t ms = H5Screate_simple(2, count, nullptr);
        rc = H5Dwrite(v.ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, tile.data());
        H5Sclose(ms);
      }
      H5Sclose(fs);
      checked(rc, file, "write uniform data");
      v.written += cols;
    }
    cols = 0;
  }

  void writeEvents(std::vector<EventInput>& inputs) {
    QuietHdf5 q;
    for (auto& ev : events) {
      std::vector<double>& b = inputs[ev.entry].buffer();
      if (b.empty()) continue;
      const hsize_t ext[1] = {ev.written + b.size()};
      checked(H5Dset_extent(ev.ds, ext), file, "extend an event dataset");
      hid_t fs = H5Dget_space(ev.ds);
      const hsize_t start[1] = {ev.written}, count[1] = {b.size()};
      H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
      hid_t ms = H5Screate_simple(1, count, nullptr);
      const herr_t rc = H5Dwrite(ev.ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, b.data());
      H5Sclose(ms);
      H5Sclose(fs);
      checked(rc, file, "write event data");
      ev.written += b.size();
      b.clear();
    }
  }

  void flushFile() {
    QuietHdf5 q;
    if (fid >= 0) checked(H5Fflush(fid, H5F_SCOPE_GLOBAL), file, "flush the file");
  }
};

namespace {

using hdf5::vlen_string;

void attr_string(hid_t obj, const char* name, const std::string& value, const std::string& file) {
  hdf5::put_attribute(obj, name, value, "NSDFWriter", file);
}

void attr_double(hid_t obj, const char* name, double value, const std::string& file) {
  hdf5::put_attribute(obj, name, value, "NSDFWriter", file);
}

hid_t make_group(hid_t fid, const std::string& path, const std::string& file) {
  return hdf5::make_group(fid, path, "NSDFWriter", file);
}

hid_t write_strings(hid_t fid, const std::string& path, const std::vector<std::string>& v,
                    const std::string& file) {
  hid_t t = vlen_string();
  const hsize_t n = v.size();
  hid_t s = H5Screate_simple(1, &n, nullptr);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t ds = H5Dcreate2(fid, path.c_str(), t, s, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  H5Pclose(lcpl);
  std::vector<const char*> p;
  for (auto& x : v) p.push_back(x.c_str());
  const herr_t rc =
      ds < 0 ? -1 : (n ? H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, p.data()) : 0);
  H5Sclose(s);
  H5Tclose(t);
  if (rc < 0 && ds >= 0) H5Dclose(ds);
  checked(rc, file, ("write " + path).c_str());
  return ds;
}

hid_t extendible(hid_t fid, const std::string& path, int rank, const hsize_t* dims,
                 const hsize_t* chunk, const std::string& file) {
  hsize_t maxd[2] = {dims[0], H5S_UNLIMITED};
  if (rank == 1) maxd[0] = H5S_UNLIMITED;
  hid_t s = H5Screate_simple(rank, dims, maxd);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, rank, chunk);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t ds = H5Dcreate2(fid, path.c_str(), H5T_IEEE_F64LE, s, lcpl, dcpl, H5P_DEFAULT);
  H5Pclose(lcpl);
  H5Pclose(dcpl);
  H5Sclose(s);
  return checked(ds, file, ("create dataset " + path).c_str());
}

/// A name not yet in `taken` (base, base_2, base_3, ...), then marks it taken.
std::string unique_name(std::set<std::string>& taken, const std::string& base) {
  std::string n = base;
  for (int k = 2; taken.count(n); ++k) n = base + "_" + std::to_string(k);
  taken.insert(n);
  return n;
}

}  // namespace

// ---- NSDFWriter ----

NSDFWriter::NSDFWriter() = default;

NSDFWriter::~NSDFWriter() {
  try {
    close();
  } catch (...) {  // a destructor cannot report; close() from the script does
  }
}

bool NSDFWriter::isOpen() const {
  return st_ && st_->fid >= 0;
}

void NSDFWriter::setFilename(const std::string& f) {
  filename_ = hdf5::valid_filename("NSDFWriter", f);
}

void NSDFWriter::setFlushLimit(unsigned n) {
  if (n == 0) throw ValueError("NSDFWriter.flushLimit: must be at least 1 (values per block)");
  flushLimit_ = n;
}

void NSDFWriter::flush() {
  if (!isOpen()) return;
  st_->writeUniform();
  st_->writeEvents(eventInputs_);
  writeAttrs();
  st_->flushFile();
}

void NSDFWriter::close() {
  if (!st_) return;
  if (st_->fid >= 0) {
    st_->writeUniform();
    st_->writeEvents(eventInputs_);
    try {
      writeAttrs();
    } catch (...) {
      std::unique_ptr<State> st = std::move(st_);
      st->closeHandles();
      throw;
    }
  }
  std::unique_ptr<State> st = std::move(st_);
  st->closeHandles();
}

void NSDFWriter::writeAttrs() {
  hdf5::write_attributes(st_->fid, attrs_, "NSDFWriter", filename_);
}

void NSDFWriter::setMode(unsigned m) {
  if (m == 2 || m == 4) {
    overwrite_ = m == 2;
    return;
  }
  throw ValueError("NSDFWriter.mode: " + std::to_string(m) +
                   (m == 1 ? " (append to an existing file) is not supported" : " is no mode") +
                   " (valid: 2 replace an existing file, 4 refuse one)");
}

std::string NSDFWriter::modelFileNames() const {
  std::string s;
  for (const auto& f : modelFiles_) s += (s.empty() ? "" : ",") + f;
  return s;
}

void NSDFWriter::setModelFileNames(std::string names) {
  std::vector<std::string> files;
  std::string cur;
  for (char ch : names + ",") {
    if (ch == ',' || ch == ' ') {
      if (!cur.empty()) files.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  for (const auto& f : files) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(f, ec))
      throw ValueError("NSDFWriter.modelFileNames: '" + f + "' is not a file");
  }
  modelFiles_ = std::move(files);
}

namespace {

using Populations = std::vector<std::pair<std::size_t, std::string>>;  // (first var, name)

/// Uniform data: one channel per requestOut message of the writer, in message id order (the
/// digests of a round come in this order too, but store() finds the channel by id and does not
/// rely on it), one variable per (element, field).
void plan_uniform(NSDFWriter::State& st, const std::vector<const ReduceMsg*>& msgs) {
  std::map<std::pair<std::uint32_t, std::string>, std::size_t> varOf;  // (element, field) -> var
  for (const ReduceMsg* m : msgs) {
    const Element* d = m->dest();
    const std::string field = m->getter()->name();
    auto key = std::make_pair(d->id().value, field);
    auto it = varOf.find(key);
    if (it == varOf.end()) {
      it = varOf.emplace(key, st.vars.size()).first;
      NSDFWriter::State::Variable v;
      v.field = field;
      v.element = d->id();
      st.vars.push_back(std::move(v));
    }
    NSDFWriter::State::Variable& v = st.vars[it->second];
    NSDFWriter::State::Channel ch{m->id(), it->second, v.sources.size(), 0};
    if (m->isSingle()) {
      const Target t = m->singleTarget();
      std::string path = object_path(d, t.data);
      if (d->isField()) path += "[" + std::to_string(t.field) + "]";
      v.sources.push_back(std::move(path));
    } else {
      for (Index i = 0; i < d->numData(); ++i) v.sources.push_back(object_path(d, i));
    }
    ch.rows = v.sources.size() - ch.row;
    st.channels.push_back(ch);
  }
}

/// Populations: one per Element and set of objects (fields over the same objects share one).
/// Also sizes the blocks: flushLimit values over all rows, a whole number of chunk columns (see
/// kChunkCols), so that a flush writes whole chunks and HDF5 never reads one back to complete it.
Populations plan_populations(NSDFWriter::State& st, const ElementTable& t, std::size_t flushLimit) {
  std::set<std::string> popNames;
  Populations pops;
  std::size_t totalRows = 0;
  for (std::size_t k = 0; k < st.vars.size(); ++k) {
    NSDFWriter::State::Variable& v = st.vars[k];
    totalRows += v.sources.size();
    for (auto& [j, name] : pops) {
      if (st.vars[j].element == v.element && st.vars[j].sources == v.sources) {
        v.pop = name;
        break;
      }
    }
    if (v.pop.empty()) {
      v.pop = unique_name(popNames, t.get(v.element)->name());
      pops.emplace_back(k, v.pop);
    }
  }
  st.block = totalRows ? std::max<std::size_t>(1, flushLimit / totalRows) : 1;
  if (st.block > kChunkCols) st.block -= st.block % kChunkCols;
  return pops;
}

/// Event sources: the messages into the writer's eventInput entries, one source per entry.
void plan_events(NSDFWriter::State& st, const Eref& e, std::size_t numInputs,
                 const std::string& who) {
  const Element* me = e.element();
  Element* fe = me->child("eventInput");
  if (!fe) return;
  std::set<std::string> evPops;
  std::map<std::uint32_t, std::string> evPopOf;  // source element -> population
  std::vector<const Msg*> in;
  for (std::uint32_t id : fe->msgIds()) {
    const Msg* m = msg_context(*me).msgs().get(id);
    if (m && m->dest() == fe) in.push_back(m);
  }
  std::sort(in.begin(), in.end(), [](auto* a, auto* b) { return a->id() < b->id(); });
  std::vector<int> taken(numInputs, 0);
  for (const Msg* m : in) {
    const Element* s = m->src();
    if (s->isField())
      throw MsgError(who + ": event sources must be data Elements, not field element " + s->path());
    const std::string field = m->srcFinfo()->name();
    auto pit = evPopOf.find(s->id().value);
    if (pit == evPopOf.end())
      pit = evPopOf.emplace(s->id().value, unique_name(evPops, s->name())).first;
    for (Index d = 0; d < s->numData(); ++d) {
      for (const Target& t : m->targets(d, 0)) {
        if (t.data != e.dataIndex() || t.field >= numInputs) continue;
        if (taken[t.field]++)
          throw MsgError(who + ": eventInput[" + std::to_string(t.field) +
                         "] has more than one source (" + object_path(s, d) +
                         " among them): give each source its own entry");
        NSDFWriter::State::EventSource ev;
        ev.entry = t.field;
        ev.pop = pit->second;
        ev.field = field;
        ev.path = object_path(s, d);
        ev.name = std::to_string(d);
        st.events.push_back(std::move(ev));
      }
    }
  }
  std::sort(st.events.begin(), st.events.end(), [](auto& a, auto& b) { return a.entry < b.entry; });
}

/// Creates the file (refusing an existing one unless overwrite).
hid_t create_file(const std::string& filename, bool overwrite, const std::string& who) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(filename, ec) && !overwrite)
    throw ValueError(who + ": file '" + filename +
                     "' exists (set overwrite = True to replace it, or choose another filename)");
  const fs::path parent = fs::path(filename).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    throw ValueError(who + ": cannot create file '" + filename + "': folder '" + parent.string() +
                     "' does not exist");
  QuietHdf5 quiet;
  errno = 0;
  // The 1.8 file format: groups with many links (one event dataset per source) are indexed
  // (B-tree v2) instead of scanned, which makes creating 1e4 event datasets several times faster.
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  const hid_t fid = H5Fcreate(filename.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (fid < 0) {
    const int err = errno;
    throw ValueError(who + ": cannot create file '" + filename + "'" +
                     (err ? std::string(": ") + std::strerror(err) : std::string()));
  }
  return fid;
}

/// NSDF's attributes and groups, and each model file's text (an attribute of /model/modelfile
/// named by the file's name).
void write_header(hid_t fid, const std::string& title, const std::vector<std::string>& modelFiles,
                  const std::string& f, const std::string& who) {
  attr_string(fid, "nsdf_version", "0.1", f);
  attr_string(fid, "dialect", "ONED", f);
  attr_string(fid, "software", "antler", f);
  attr_string(fid, "title", title, f);
  if (!modelFiles.empty()) {
    hid_t g = make_group(fid, "/model/modelfile", f);
    for (const auto& file : modelFiles) {
      std::ifstream in(file, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (!in.good() && !in.eof())
        throw ValueError(who + ": cannot read the model file '" + file + "'");
      attr_string(g, std::filesystem::path(file).filename().c_str(), text, f);
    }
    H5Gclose(g);
  }
  for (const char* g :
       {"/data/uniform", "/data/event", "/data/nonuniform", "/data/static", "/map/uniform",
        "/map/event", "/map/nonuniform", "/map/static", "/map/time", "/model/modeltree"})
    H5Gclose(make_group(fid, g, f));
}

/// One dataset per variable (rows: its sources; columns: time) with its population's source map.
void make_uniform_datasets(NSDFWriter::State& st, const Populations& pops, double dt,
                           const std::string& f) {
  std::map<std::string, hid_t> mapDs;
  for (auto& [j, name] : pops)
    mapDs[name] = write_strings(st.fid, "/map/uniform/" + name, st.vars[j].sources, f);
  for (auto& [name, ds] : mapDs) H5DSset_scale(ds, "source");
  // Chunks of about 1 MiB (kChunkValues), as wide as a block (at most kChunkCols columns, and
  // a block is a multiple of that): each flush then writes whole chunks.
  const hsize_t cc = std::min<hsize_t>(st.block, kChunkCols);
  for (auto& v : st.vars) {
    const hsize_t rows = v.sources.size();
    const hsize_t dims[2] = {rows, 0};
    // Rows split evenly between the chunks: HDF5 allocates whole chunks at the edge too.
    const hsize_t most = std::clamp<hsize_t>(kChunkValues / cc, 1, rows);
    const hsize_t nChunks = (rows + most - 1) / most;
    const hsize_t chunk[2] = {(rows + nChunks - 1) / nChunks, cc};
    v.chunkRows = chunk[0];
    v.ds = extendible(st.fid, "/data/uniform/" + v.pop + "/" + v.field, 2, dims, chunk, f);
    attr_double(v.ds, "tstart", 0.0, f);
    attr_double(v.ds, "dt", dt, f);
    attr_string(v.ds, "field", v.field, f);
    attr_string(v.ds, "unit", unit_of(v.field), f);
    attr_string(v.ds, "timeunit", "s", f);
    checked(H5DSattach_scale(v.ds, mapDs[v.pop], 0), f, "attach the source scale");
    v.buf.assign(rows * st.block, 0.0);
  }
  for (auto& [name, ds] : mapDs) H5Dclose(ds);
}

using EventGroups = std::map<std::pair<std::string, std::string>, std::vector<std::size_t>>;

/// Events: one dataset per source, grouped by (population, field). field and unit are attributes
/// of the group /data/event/<pop>/<field>, source of each dataset: one attribute per dataset
/// instead of three keeps 1e4 sources affordable.
EventGroups make_event_datasets(NSDFWriter::State& st, const std::string& f) {
  EventGroups groups;
  for (std::size_t k = 0; k < st.events.size(); ++k) {
    auto& ev = st.events[k];
    const hsize_t dims[1] = {0}, chunk[1] = {256};
    const std::string path = "/data/event/" + ev.pop + "/" + ev.field + "/" + ev.name;
    ev.ds = extendible(st.fid, path, 1, dims, chunk, f);
    attr_string(ev.ds, "source", ev.path, f);
    if (groups.find({ev.pop, ev.field}) == groups.end()) {
      hid_t g =
          checked(H5Oopen(st.fid, ("/data/event/" + ev.pop + "/" + ev.field).c_str(), H5P_DEFAULT),
                  f, "open an event group");
      attr_string(g, "field", ev.field, f);
      attr_string(g, "unit", "s", f);
      H5Oclose(g);
    }
    groups[{ev.pop, ev.field}].push_back(k);
  }
  return groups;
}

/// The (source, data reference) map of each population and field: /map/event/<pop>/<field>.
void write_event_maps(const NSDFWriter::State& st, const EventGroups& groups,
                      const std::string& f) {
  struct MapRow {
    const char* source;
    hobj_ref_t data;
  };
  for (auto& [key, idx] : groups) {
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(MapRow));
    hid_t strType = vlen_string();
    H5Tinsert(t, "source", HOFFSET(MapRow, source), strType);
    H5Tinsert(t, "data", HOFFSET(MapRow, data), H5T_STD_REF_OBJ);
    std::vector<MapRow> rows(idx.size());
    for (std::size_t k = 0; k < idx.size(); ++k) {
      const auto& ev = st.events[idx[k]];
      rows[k].source = ev.path.c_str();
      const std::string path = "/data/event/" + ev.pop + "/" + ev.field + "/" + ev.name;
      checked(H5Rcreate(&rows[k].data, st.fid, path.c_str(), H5R_OBJECT, -1), f,
              "reference an event dataset");
    }
    const hsize_t n = rows.size();
    hid_t s = H5Screate_simple(1, &n, nullptr);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    const std::string path = "/map/event/" + key.first + "/" + key.second;
    hid_t ds = H5Dcreate2(st.fid, path.c_str(), t, s, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    const herr_t rc = ds < 0 ? -1 : H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data());
    if (ds >= 0) H5Dclose(ds);
    H5Pclose(lcpl);
    H5Sclose(s);
    H5Tclose(strType);
    H5Tclose(t);
    checked(rc, f, ("write " + path).c_str());
  }
}

}  // namespace

void NSDFWriter::reinit(const Eref& e, ProcPtr p) {
  close();
  samples_ = 0;
  for (auto& in : eventInputs_) in.buffer().clear();
  const Element* me = e.element();
  const std::string who = "NSDFWriter " + me->path();
  if (me->isGlobal())
    throw ValueError(who + ": a writer must not be global (every node would write the file)");
  if (filename_.empty())
    throw ValueError(who + ": set filename before reinit (the HDF5 file to write)");

  auto st = std::make_unique<State>();
  st->file = filename_;
  st->dt = p->dt;
  plan_uniform(*st, requestOut.messagesOf(e));
  const Populations pops = plan_populations(*st, me->context().elements(), flushLimit_);
  plan_events(*st, e, eventInputs_.size(), who);

  // The file; what was made is removed if anything fails.
  st->fid = create_file(filename_, overwrite_, who);
  QuietHdf5 quiet;
  try {
    write_header(st->fid, "recorded by " + me->path(), modelFiles_, filename_, who);
    make_uniform_datasets(*st, pops, p->dt, filename_);
    write_event_maps(*st, make_event_datasets(*st, filename_), filename_);
    checked(H5Fflush(st->fid, H5F_SCOPE_GLOBAL), filename_, "flush the file");
  } catch (...) {
    st->closeHandles();
    std::error_code ec;
    std::filesystem::remove(filename_, ec);
    throw;
  }
  st_ = std::move(st);
  // The initial values, as a Table records them at reinit (every channel's message exists now).
  requestOut.ask(st_->channels, e, [](const State::Channel&) {});
}

void NSDFWriter::process(const Eref& e, ProcPtr) {
  if (!st_)
    throw StateError("NSDFWriter " + e.element()->path() +
                     ": no file is open (reinit opens it; close() ended the last recording)");
  if (!st_->error.empty()) {
    std::string msg = std::move(st_->error);
    st_->error.clear();
    throw ValueError("NSDFWriter " + e.element()->path() + ": " + msg);
  }
  std::size_t buffered = 0;
  for (const auto& ev : st_->events) buffered += eventInputs_[ev.entry].buffer().size();
  if (buffered >= std::max<std::size_t>(1, flushLimit_ / 2)) st_->writeEvents(eventInputs_);
  // A message deleted since reinit is not asked for: its rows read NaN from this sample on, and
  // the recording goes on (the file's layout was fixed at reinit; reinit starts a new file for
  // the model as it is then).
  State& s = *st_;
  const std::size_t live = requestOut.ask(s.channels, e, [&](const State::Channel& ch) {
    State::Variable& v = s.vars[ch.var];
    std::fill_n(v.buf.data() + s.cols * v.sources.size() + ch.row, ch.rows,
                std::numeric_limits<double>::quiet_NaN());
    ++s.delivered;
  });
  if (live == 0 && !s.channels.empty()) completeColumn();
}

void NSDFWriter::store(const Eref&, std::uint32_t msgId, const GatherValues& g) {
  if (!st_) return;
  State& s = *st_;
  auto it =
      std::lower_bound(s.channels.begin(), s.channels.end(), msgId,
                       [](const State::Channel& c, std::uint32_t id) { return c.msgId < id; });
  if (it == s.channels.end() || it->msgId != msgId) return;  // a message added after reinit
  if (g.values.size() != it->rows) {
    s.error = "message " + std::to_string(msgId) + " gathered " + std::to_string(g.values.size()) +
              " values for " + std::to_string(it->rows) + " objects";
    return;
  }
  State::Variable& v = s.vars[it->var];
  if (it->rows)
    std::memcpy(v.buf.data() + s.cols * v.sources.size() + it->row, g.values.data(),
                it->rows * sizeof(double));
  if (++s.delivered < s.channels.size()) return;
  completeColumn();
}

void NSDFWriter::completeColumn() {
  State& s = *st_;
  s.delivered = 0;
  ++samples_;
  if (++s.cols == s.block) {
    try {
      s.writeUniform();
      s.flushFile();
    } catch (const std::exception& ex) {
      s.error = ex.what();
      s.cols = 0;
    }
  }
}

const Cinfo* NSDFWriter::initCinfo() {
  static const Cinfo* c = [] {
    ClassBuilder<NSDFWriter> b("NSDFWriter",
                               "streams value fields and event times into an NSDF (HDF5) file");
    b.value("filename", &NSDFWriter::filename, &NSDFWriter::setFilename,
            "the HDF5 file to write (created at reinit)")
        .value("overwrite", &NSDFWriter::overwrite_,
               "if true, reinit replaces an existing file; else an existing file is an error")
        .value("mode", &NSDFWriter::mode, &NSDFWriter::setMode,
               "MOOSE's: 2 replaces an existing file (overwrite), 4 refuses one")
        .value("modelFileNames", &NSDFWriter::modelFileNames, &NSDFWriter::setModelFileNames,
               "files whose text is stored under /model/modelfile (comma-separated)");
    Hdf5Attributes::addFields(b, &NSDFWriter::attrs_, "NSDFWriter");
    return b
        .value("flushLimit", &NSDFWriter::flushLimit, &NSDFWriter::setFlushLimit,
               "values (doubles) buffered before a block is written (default 4194304: 32 MiB)")
        .readOnly("samples", &NSDFWriter::samples, "samples (time points) recorded since reinit")
        .readOnly("isOpen", &NSDFWriter::isOpen, "true while the file is open")
        .dest<&NSDFWriter::flush>("flush", "writes what is buffered; the file stays open")
        .dest<&NSDFWriter::close>("close", "writes what is buffered and closes the file")
        .reduce(NSDFWriter::requestOut)
        .fieldElement("eventInput", &NSDFWriter::eventInputs_,
                      "event sources (entries: EventInput), one per source", "numEventInput")
        .proc<&NSDFWriter::process, &NSDFWriter::reinit>()
        .defaultTick(30)  // MOOSE's default tick for NSDFWriter
        .build();
  }();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = NSDFWriter::initCinfo();
}

}  // namespace antler
