#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Cinfo: a class's name, base class, fields (Finfos) and how to make its data arrays; and the
/// registry of all classes. Classes are normally declared with ClassBuilder (class_builder.hpp).
#include <map>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "core/finfo.hpp"
#include "core/huge_pages.hpp"

namespace antler {

/// Makes and destroys arrays of a class's objects.
class Dinfo {
 public:
  virtual ~Dinfo() = default;
  /// Bytes per object.
  virtual std::size_t size() const = 0;
  /// Bytes an object holds once made: its size and what its constructor allocates (a class
  /// declares that as `static constexpr std::size_t kOwnedBytes`; IntFire's block behind its
  /// pointer). What create checks against the node's memory.
  virtual std::size_t footprint() const = 0;
  /// n default-constructed objects (nullptr for n == 0).
  virtual char* allocate(Index n) const = 0;
  /// Destroys an array made by allocate.
  virtual void destroy(char* p, Index n) const = 0;
};

/// Dinfo of a default-constructible C++ class T.
template <class T>
class DinfoT final : public Dinfo {
 public:
  std::size_t size() const override { return sizeof(T); }
  std::size_t footprint() const override {
    if constexpr (requires { T::kOwnedBytes; })
      return sizeof(T) + T::kOwnedBytes;
    else
      return sizeof(T);
  }
  char* allocate(Index n) const override {
    if (n == 0) return nullptr;
    // Large arrays on huge pages (core/huge_pages.hpp): a step reaches their objects at random.
    T* p = static_cast<T*>(huge_alloc(sizeof(T) * n, alignof(T)));
    Index i = 0;
    try {
      for (; i < n; ++i) new (p + i) T();
    } catch (...) {
      for (Index j = 0; j < i; ++j) p[j].~T();
      huge_free(p, sizeof(T) * n, alignof(T));
      throw;
    }
    return reinterpret_cast<char*>(p);
  }
  void destroy(char* raw, Index n) const override {
    if (!raw) return;
    T* p = reinterpret_cast<T*>(raw);
    for (Index i = 0; i < n; ++i) p[i].~T();
    huge_free(p, sizeof(T) * n, alignof(T));
  }
};

/// Class information: the fields of a class and how to make its objects.
class Cinfo {
 public:
  Cinfo(std::string name, std::string doc, const Cinfo* base, std::unique_ptr<Dinfo> dinfo);
  Cinfo(const Cinfo&) = delete;
  Cinfo& operator=(const Cinfo&) = delete;

  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  /// The base class (nullptr only for Neutral).
  const Cinfo* base() const { return base_; }
  const Dinfo& dinfo() const { return *dinfo_; }

  /// Every field, inherited ones first, in declaration order.
  const std::vector<const Finfo*>& finfos() const { return finfos_; }
  /// The field with this name (own or inherited), or nullptr.
  const Finfo* findFinfo(std::string_view name) const;
  /// Names of every field.
  std::vector<std::string> fieldNames() const;
  /// Names of the fields of one kind.
  std::vector<std::string> fieldNames(FinfoKind kind) const;
  /// True if this class is `className` or derives from it.
  bool isA(std::string_view className) const;
  /// SrcFinfos by bind index.
  const std::vector<const SrcFinfoBase*>& srcFinfos() const { return srcs_; }
  /// The proc functions, or nullptr if the class cannot be scheduled.
  const ProcFinfoBase* proc() const { return proc_; }
  /// The init functions (a second phase, run on the tick before proc's: Compartment), or nullptr.
  const ProcFinfoBase* init() const { return init_; }
  /// The tick a new Element of this class is scheduled on (MOOSE's default tick; inherited from
  /// the base class unless set), or -1: not scheduled until useClock.
  int defaultTick() const { return defaultTick_; }
  void setDefaultTick(int t) { defaultTick_ = t; }
  /// Array fields that become child FieldElements.
  const std::vector<const FieldElementFinfoBase*>& fieldElementFinfos() const {
    return fieldElements_;
  }

  /// Adds a field (used by ClassBuilder). A clash with an existing name is an error.
  void add(std::unique_ptr<Finfo> f);
  /// Adds a SrcFinfo owned elsewhere (a static member of the class).
  void addSrc(const SrcFinfoBase& s);

  /// The registered class with this name, or nullptr.
  static const Cinfo* find(std::string_view name);
  /// The registered class with this name; ClassError naming the registered classes if none.
  static const Cinfo* require(std::string_view name, std::string_view operation);
  /// Names of every registered class, sorted.
  static std::vector<std::string> classNames();
  /// Registers c (done by ClassBuilder::build). A second class with the same name is an
  /// InternalError at program start; during a library load it is recorded (see beginLoad).
  static void registerClass(const Cinfo* c);
  /// The file whose code registered the class (a library, or the program), or "" if unknown.
  static std::string libraryOf(std::string_view name);

  /// What a library load registered (see beginLoad).
  struct LoadResult {
    std::vector<std::string> added;  ///< classes the load registered and kept, sorted
    std::string clash;               ///< the first class name registered twice, or ""
    std::string clashOldLibrary;     ///< the file that registered `clash` first
    std::string clashNewLibrary;     ///< the file whose code registered it again
  };
  /// Starts a library load (Shell's loadLibrary wraps dlopen in beginLoad/endLoad). Until
  /// endLoad, classes that register are recorded, and a name already registered is noted
  /// instead of thrown: an exception must not leave a static initializer inside dlopen. Loads
  /// do not nest; `library` (the path as given) names the load in messages.
  static void beginLoad(std::string library);
  /// Ends the load. If `keep` and no name clashed, what it registered stays; otherwise every
  /// class it registered is removed again, and the registry is as it was before beginLoad.
  static LoadResult endLoad(bool keep);

 private:
  void index(const Finfo* f);
  std::string name_, doc_;
  const Cinfo* base_;
  std::unique_ptr<Dinfo> dinfo_;
  std::vector<std::unique_ptr<Finfo>> own_;
  std::vector<const Finfo*> finfos_;
  std::map<std::string, const Finfo*, std::less<>> byName_;
  std::vector<const SrcFinfoBase*> srcs_;
  const ProcFinfoBase* proc_ = nullptr;
  const ProcFinfoBase* init_ = nullptr;
  int defaultTick_ = -1;
  std::vector<const FieldElementFinfoBase*> fieldElements_;
};

}  // namespace antler
#pragma GCC visibility pop
