#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Shell: the command surface scripts and driver programs talk to.
///
/// Every command that changes the model or reads object data runs on every node in lockstep:
/// the driver (rank 0) broadcasts it, each node executes it on its own part of the model, and the
/// replies (values, errors) come back to the driver. Queries of the model's structure (paths,
/// children, classes, fields) need no communication: every node holds the whole tree.
///
/// A command either succeeds everywhere or fails with an Error naming the thing and the valid
/// choices; checks happen before any change, so a failed command changes nothing. An error on
/// any node reaches the driver as an exception.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "core/buffer.hpp"
#include "core/comm/comm.hpp"
#include "core/comm/partners.hpp"
#include "core/id.hpp"

namespace antler {

class Msg;
class Simulation;
struct PhaseTimes;

/// Ops of the command protocol (internal; stable only within one build).
enum class Op : std::uint32_t {
  quit = 0,
  create,
  destroy,
  addMsg,
  setRandomConnectivity,
  pairFill,
  setStride,
  set,
  get,
  setVec,
  getVec,
  setAll,
  lookupGet,
  lookupSet,
  call,
  setClock,
  useClock,
  reinit,
  start,
  setNumThreads,
  clearModel,
  syncDataHandler,
  reduceNow,
  seed,
  loadLibrary,
  blockReduce,
  allToAll,
  phaseTimers,
  pairFillValues,
  extension,  ///< a command registered by another layer (see Shell::registerCommand)
};

/// What Shell::blockReduce runs: a pattern over a block grid (core/comm/partners.hpp).
struct BlockSpec {
  comm::Pattern pattern = comm::Pattern::merge;
  int k = 2;                         ///< the radix (>= 2); ignored with explicit rounds
  bool contiguous = true;            ///< distance doubling (true) or halving
  std::vector<int> divisions;        ///< the grid; empty: one dimension of every entry
  std::vector<comm::RoundK> rounds;  ///< explicit (dimension, group size) rounds; empty: factor k
};

/// The Shell of one Simulation (Simulation::shell(); only the driver's issues commands).
class Shell {
 public:
  Shell(const Shell&) = delete;
  Shell& operator=(const Shell&) = delete;

  // ---- structure: create, delete, connect ----

  /// Creates an Element of `className` with n entries at `path` (the parent must exist). Global
  /// elements hold every entry on every node. Returns the new Element's ObjId.
  ObjId create(std::string_view className, std::string_view path, Index n = 1, bool global = false);
  /// Deletes the Element at path (and everything below it, and every message touching them).
  void destroy(std::string_view path);
  void destroy(ObjId obj);
  /// Connects src.srcField to dest.destField with a message of kind Single, OneToOne, OneToAll,
  /// Diagonal, Sparse or Reduce. Returns the message id.
  std::uint32_t addMsg(std::string_view kind, ObjId src, std::string_view srcField, ObjId dest,
                       std::string_view destField);
  std::uint32_t addMsg(std::string_view kind, std::string_view src, std::string_view srcField,
                       std::string_view dest, std::string_view destField);
  /// Fills a Sparse message at random (see SparseMsg::setRandomConnectivity).
  void setRandomConnectivity(std::uint32_t msg, double probability, std::uint64_t seed);
  /// Fills a Sparse message from index pairs: (src[k], dest[k]) for every k. The indices are read
  /// where they lie (a numpy array's memory, from Python) and travel to the nodes as one copy in
  /// the command's bytes.
  void pairFill(std::uint32_t msg, std::span<const Index> src, std::span<const Index> dest);
  void pairFill(std::uint32_t msg, const std::vector<Index>& src, const std::vector<Index>& dest);
  /// Field values for the entries a pairFill makes: one per pair, in the order of the pairs,
  /// packed by the field's type (as setVecPacked's) by `pack`, which appends them to the buffer
  /// it is given and returns how many it wrote; or, with no `pack`, `count` values already
  /// packed in `packed` (an array of the field's own type: on one node read where they lie).
  struct PairValues {
    std::string field;
    const std::type_info* type = nullptr;
    std::function<std::uint64_t(ByteBuffer&)> pack;
    std::span<const char> packed;
    std::uint64_t count = 0;
  };
  /// pairFill, then each of `fields` set on the entry of the destination field element that each
  /// pair made (a synapse's weight and delay): the values in the order of the pairs, as Brian2's
  /// and NEST's connect take them, with no sort by the caller (see SparseMsg::forEachPairField
  /// for which entry a pair makes). Every check (message, field, type, count, each value by the
  /// field's setter) comes before the fill: if one fails, nothing changes.
  void pairFill(std::uint32_t msg, std::span<const Index> src, std::span<const Index> dest,
                const std::vector<PairValues>& fields);
  /// Sets the stride of a Diagonal message.
  void setStride(std::uint32_t msg, long stride);
  /// The message with this id (nullptr if none); metadata, valid on every node.
  const Msg* msg(std::uint32_t id) const;
  /// Deletes every Element but the root, every message, and resets the clock.
  void clearModel();

  // ---- the current element (MOOSE's cwe): every path that does not start with '/' starts here
  // ----

  /// Makes the element at path the current element (relative paths resolve against the old one).
  /// PathError if there is none; a field element or an entry (index) is accepted.
  void ce(std::string_view path);
  /// The current element (the root at start, and again if the current element is deleted).
  ObjId cwe() const;
  /// The current element's path ("/net/cells", or "/net/cells[3]" if ce named entry 3).
  std::string pwd() const;
  /// path made absolute against the current element (an absolute path is returned unchanged).
  std::string absolute(std::string_view path) const;

  // ---- queries (local: every node holds the whole tree) ----

  /// The object at path; PathError if none.
  ObjId find(std::string_view path) const;
  /// True if an element exists at path.
  bool exists(std::string_view path) const;
  /// Children of the element at path.
  std::vector<ObjId> children(std::string_view path) const;
  /// The path of an Element ("/model/neurons"), or of one object ("/model/neurons[3]").
  std::string path(Id id) const;
  std::string path(const ObjId& o) const;
  /// Elements matching a wildcard pattern such as "/model/##[TYPE=IntFire]".
  std::vector<ObjId> wildcardFind(std::string_view pattern) const;
  /// Every registered class name.
  static std::vector<std::string> classNames();
  /// Field names of a class, with kind and type: {name, kind, type}.
  struct FieldInfo {
    std::string name, kind, type, doc;
    std::string sizeField;  ///< a field element's: the field of its parent that sizes it
  };
  static std::vector<FieldInfo> fieldInfo(std::string_view className,
                                          std::string_view operation = "getFieldNames");

  // ---- descriptions: plain data for bindings and tools (shell/describe.cpp) ----
  // Local (every node holds the whole tree), with the checks and messages of the commands.

  struct ElementInfo {
    std::string className, path, name;
    Index numData = 0;
    bool isField = false, isGlobal = false;
    Id parent;
    Index fieldDimension = 0;  ///< a FieldElement's, as the last sync set it (0 otherwise)
    std::vector<Id> children;
  };
  /// What the element of o is; PathError if it no longer exists.
  ElementInfo elementInfo(ObjId o) const;
  /// The object a path names, relative paths from the current element (`operation` prefixes
  /// errors); find() with another name in its errors.
  ObjId resolve(std::string_view path, std::string_view operation) const;
  /// The object a path names, or nothing (malformed paths and bad indices still throw).
  std::optional<ObjId> lookup(std::string_view path) const;
  /// The C++ type of value field `field` of o's class: FieldError naming the fields there are if
  /// it has none, or (writable) if it is read-only. `operation` prefixes errors.
  const std::type_info& valueType(ObjId o, std::string_view field, std::string_view operation,
                                  bool writable) const;
  /// Key and value types of lookup field `field` (FieldError as valueType).
  std::pair<const std::type_info*, const std::type_info*> lookupTypes(ObjId o,
                                                                      std::string_view field,
                                                                      std::string_view operation,
                                                                      bool writable) const;
  /// Argument types of destination function `dest` of o's class (FieldError listing them if none).
  const std::vector<const std::type_info*>& destTypes(ObjId o, std::string_view dest) const;
  struct MsgInfo {
    std::uint32_t id = 0;
    std::string kind;
    Id src, dest;
    std::string srcPath, srcField, destPath, destField;
    std::size_t entries = 0;  ///< a Sparse message's entries (0 for other kinds)
    ObjId from, to;           ///< a Single message's two objects (else the two elements)
    long stride = 0;          ///< a Diagonal message's stride
  };
  /// Every message, in id order.
  std::vector<MsgInfo> messages() const;
  /// One message; MsgError if there is none with this id.
  MsgInfo messageInfo(std::uint32_t id) const;
  /// A class's documentation, and its base classes from itself up (ValueError naming the classes
  /// there are if it is unknown; `operation` prefixes errors).
  static std::string classDoc(std::string_view className, std::string_view operation);
  static std::vector<std::string> classBases(std::string_view className,
                                             std::string_view operation);
  /// The elements on each tick (their paths, ":init" appended for the init phase), in run order.
  std::vector<std::vector<std::string>> schedule() const;
  /// The tick o's element is on in the init or process phase, or -1.
  int tickOf(ObjId o, bool init) const;
  /// Every tick's dt (0 for ticks that are off).
  std::vector<double> tickDts() const;
  /// Base steps taken since reinit, and the model's random seed.
  std::uint64_t currentStep() const;
  std::uint64_t currentSeed() const;
  /// Asks a running clock to stop at the end of its step: async-signal-safe (one atomic store),
  /// for a SIGINT handler; a no-op when nothing runs.
  void interrupt();

  // ---- tree editing: copy and move (see shell/copy_move.cpp) ----

  /// Deep-copies the subtree at src under newParent as `name` (src's name if empty): every
  /// element (class, entries, global flag), every settable value field of every entry (field
  /// elements too: their array sizes, then their fields) and every message with both ends inside
  /// the subtree. Messages that cross the subtree's boundary, lookup fields, schedules and state
  /// not held in value fields are not copied. With n > 1 every copied element holds n x its
  /// entries (copy k of entry d is entry k * numData + d) and the internal messages connect each
  /// copy to itself only. Returns the new root. On bad input (unknown elements, the root, a field
  /// element, a newParent inside src, a name taken or invalid, n = 0) it throws and changes
  /// nothing; a failure part-way deletes what was made.
  ObjId copy(ObjId src, ObjId newParent, std::string_view name = {}, Index n = 1);
  /// copy by paths (relative paths start at the current element).
  ObjId copy(std::string_view src, std::string_view newParent, std::string_view name = {},
             Index n = 1);
  /// Moves the element at src (and its subtree) under newParent, keeping its name, every message
  /// and every schedule. Refuses the root, a field element, a newParent inside src's subtree and a
  /// name already taken there; nothing changes then.
  void move(ObjId src, ObjId newParent);
  /// move by paths (relative paths start at the current element).
  void move(std::string_view src, std::string_view newParent);

  // ---- values (routed to the node that owns the object) ----

  /// Sets field of obj to the packed value of C++ type `type`.
  void setPacked(ObjId obj, std::string_view field, const std::type_info& type,
                 const ByteBuffer& value);
  /// The packed value of field of obj (TypeError if the field's type is not `type`).
  ByteBuffer getPacked(ObjId obj, std::string_view field, const std::type_info& type);
  /// Packed values of field over all entries of an Element, in global order (wholeElement), or
  /// over the field entries of one parent of a FieldElement (obj's dataIndex).
  ByteBuffer getVecPacked(ObjId obj, std::string_view field, const std::type_info& type,
                          bool wholeElement);
  /// Sets field on every entry from n packed values (n must be the entry count).
  void setVecPacked(ObjId obj, std::string_view field, const std::type_info& type,
                    const ByteBuffer& values, std::uint64_t n, bool wholeElement);
  /// The same with the values written by `pack` straight into the command's bytes (a vector of
  /// 1e7 doubles is held once, not also in a buffer of its own): pack appends the packed values
  /// to the buffer it is given and returns how many it wrote; if it throws, nothing is sent.
  void setVecPacked(ObjId obj, std::string_view field, const std::type_info& type,
                    bool wholeElement, const std::function<std::uint64_t(ByteBuffer&)>& pack);
  /// Sets field on every entry of the Element (every field entry of a FieldElement) to one value.
  void setAllPacked(ObjId obj, std::string_view field, const std::type_info& type,
                    const ByteBuffer& value);
  /// LookupValueFinfo get/set with a packed key.
  ByteBuffer lookupGetPacked(ObjId obj, std::string_view field, const std::type_info& keyType,
                             const ByteBuffer& key, const std::type_info& type);
  void lookupSetPacked(ObjId obj, std::string_view field, const std::type_info& keyType,
                       const ByteBuffer& key, const std::type_info& type, const ByteBuffer& value);
  /// Calls a DestFinfo on obj with packed arguments of the given types.
  void callPacked(ObjId obj, std::string_view dest, const std::vector<const std::type_info*>& types,
                  const ByteBuffer& args);

  // ---- clock ----

  void setClock(unsigned tick, double dt);
  /// Puts every element matching pathOrWildcard (a comma-separated list of paths and patterns)
  /// on tick, in the phase `field` names ("process"/"proc", or "init"), taking each off the
  /// tick it was on in that phase (MOOSE's useClock); tick kNoTick takes them off. Elements a
  /// pattern matches that have no such phase are skipped; a plain path must name one that has it.
  void useClock(unsigned tick, std::string_view pathOrWildcard, std::string_view field = "process");
  /// useClock's tick that unschedules.
  static constexpr unsigned kNoTick = ~0u;
  void reinit();
  void start(double runtime);
  /// Stops a running clock at the end of the current step (from process code); no-op otherwise.
  void stop();
  double currentTime() const;
  void setNumThreads(unsigned n);
  unsigned numThreads() const;
  /// Turns the clock's phase timers on (zeroing them) or off, on every node (Clock::
  /// setPhaseTimers); phaseTimes() is this node's totals.
  void setPhaseTimers(bool on);
  const PhaseTimes& phaseTimes() const;
  /// Sets the model's random seed on every node (see core/random.hpp).
  void seed(std::uint64_t s);
  /// Loads a shared library of element classes on every node (its classes register themselves);
  /// returns the names of the classes it added.
  std::vector<std::string> loadLibrary(const std::string& path);
  /// Smallest dt in use by a scheduled tick (0 if none).
  double baseDt() const;

  // ---- reductions ----

  /// Sets the fieldDimension of a FieldElement (e.g. "/net/neurons/synapse") to the largest entry
  /// count of any parent on any node, on every node, and returns it (ReduceFieldDimension through
  /// the reduce path). Callable whenever the clock is not running.
  Index doSyncDataHandler(std::string_view fieldElementPath);
  Index doSyncDataHandler(Id fieldElement);
  /// Runs, now, every reduction connected to reduce field `field` of `requester` (as if it had
  /// sent in process), and calls its digest.
  void reduceNow(ObjId requester, std::string_view field);

  // ---- block rounds over the entries of an element (shell/blocks.hpp) ----

  /// Runs the rounds of spec's pattern over the entries of a distributed data element (gid =
  /// data index), calling its block field `field` (ClassBuilder::blocks) on every entry active in
  /// each round, on every node. Its grid is spec.divisions (default: one dimension of every entry).
  void blockReduce(ObjId element, std::string_view field, const BlockSpec& spec = {});
  void blockReduce(std::string_view path, std::string_view field, const BlockSpec& spec = {});
  /// DIY's all_to_all over the entries: `field` runs once sending (round 0, every gid in its
  /// out-link) and once receiving (round 1, every gid in its in-link), k-ary rounds between.
  void allToAll(ObjId element, std::string_view field, int k = 2);
  void allToAll(std::string_view path, std::string_view field, int k = 2);

  // ---- nodes ----

  int numNodes() const;
  int myNode() const;
  bool isDriver() const { return myNode() == 0; }

  // ---- the command protocol ----

  /// Runs one command on every node and returns each node's reply payload (index = node).
  /// Called by the driver; throws the first node's error.
  std::vector<ByteBuffer> dispatch(const ByteBuffer& cmd);
  /// Executes one command on this node (workers call this from their serve loop). Returns the
  /// reply: {status u8, kind u8, message, payload}.
  ByteBuffer execute(const ByteBuffer& cmd);
  /// Worker loop: receives and executes commands until the driver says quit; returns the exit
  /// code the driver sent.
  int serve();
  /// Tells the workers to leave their loop with this exit code (the driver's Runtime does this).
  void quitWorkers(int exitCode);

  /// The communicator of the command channel and of the multi-node checks inside commands (the
  /// Runtime sets it: a duplicate of the communicator antler runs on).
  void setComm(comm::Comm c) { comm_ = std::move(c); }
  comm::Comm& comm() { return comm_; }

  /// A handler for Op::extension commands, registered under a name by another layer; it runs on
  /// every node, on that node's part of the simulation.
  using Handler = void (*)(Simulation& sim, Reader& args, Writer& reply);
  static void registerCommand(const std::string& name, Handler h);
  /// Runs a registered extension command on every node; returns each node's payload.
  std::vector<ByteBuffer> dispatchExtension(const std::string& name, const ByteBuffer& args);

 private:
  friend class Simulation;
  explicit Shell(Simulation& sim);
  void checkIdle(const char* op) const;
  /// A command's reply from running `body` here, its errors caught as execute catches a
  /// handler's (`op` names it in an out-of-memory error).
  ByteBuffer guarded(const char* op, const std::function<void(Writer&)>& body);
  /// The replies' errors thrown (the first node's), their payloads returned.
  std::vector<ByteBuffer> settle(std::vector<ByteBuffer> replies);
  /// On one node: runs `body` as a command's handler, on the caller's arrays where they lie (no
  /// command bytes: a fill of 1e8 pairs is not copied first); false (nothing run) on more nodes,
  /// where the command travels.
  bool runHere(const char* op, const std::function<void(Simulation&)>& body);
  Simulation& sim_;
  comm::Comm comm_;
  ObjId cwe_ = ObjId(Id::root());
};

}  // namespace antler
#pragma GCC visibility pop
