// The Shell's handlers for libraries and extension commands (see shell/detail/handlers.hpp).
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <map>

#include "shell/detail/handlers.hpp"

namespace antler::shell_detail {

std::map<std::string, Shell::Handler>& extensions() {
  static std::map<std::string, Shell::Handler> m;
  return m;
}

namespace {
/// The file a dlopen handle loaded (the path as the loader resolved it), or "".
std::string loaded_file(void* h) {
  link_map* lm = nullptr;
  if (h && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name)
    return lm->l_name;
  return {};
}

/// Libraries refused for a class name clash that the loader could not unload (dlclose keeps a
/// library with unique symbols resident): a second dlopen returns the same handle without
/// running its initializers, so the refusal is remembered here and given again.
std::map<void*, std::pair<std::string, std::string>>& refused_libraries() {  // file, message
  static std::map<void*, std::pair<std::string, std::string>> m;
  return m;
}

/// Refuses what dlopen cannot take safely: it blocks on a named pipe (waiting for a writer)
/// and dies with SIGBUS on a truncated library (its segments are mapped past the end of the
/// file). A path with no '/' is looked up by dlopen in the library path, and left to it.
void check_library_file(const std::string& path) {
  if (path.find('/') == std::string::npos) return;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // dlopen's own message names what is wrong
  if (!S_ISREG(st.st_mode))
    throw ValueError("loadLibrary: '" + path +
                     "' is not a regular file (a shared library of antler classes is)");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return;
  Elf64_Ehdr eh{};
  const bool header = std::fread(&eh, sizeof eh, 1, f) == 1 &&
                      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
                      eh.e_ident[EI_CLASS] == ELFCLASS64;
  bool complete = header;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (header) {
    // Every loaded segment and the section headers must lie inside the file.
    complete = eh.e_phoff + std::uint64_t{eh.e_phnum} * eh.e_phentsize <= size &&
               eh.e_shoff + std::uint64_t{eh.e_shnum} * eh.e_shentsize <= size;
    for (unsigned i = 0; complete && i < eh.e_phnum; ++i) {
      Elf64_Phdr ph{};
      complete = std::fseek(f, static_cast<long>(eh.e_phoff + i * eh.e_phentsize), SEEK_SET) == 0 &&
                 std::fread(&ph, sizeof ph, 1, f) == 1 &&
                 (ph.p_type != PT_LOAD || ph.p_offset + ph.p_filesz <= size);
    }
  }
  std::fclose(f);
  if (!header) throw ValueError("loadLibrary: '" + path + "' is not a 64-bit ELF shared library");
  if (!complete)
    throw ValueError("loadLibrary: '" + path + "' is truncated (" + std::to_string(size) +
                     " bytes: its segments reach past the end of the file)");
}
}  // namespace

namespace {

/// Shell commands a library registers as it loads (static initialisers) are part of the load
/// transaction too: a refused library is closed, and a handler of it left registered would point
/// into unmapped code. And no library replaces a command already registered (a library carrying
/// its own copy of antler's core registers all of antler's commands again).
struct CommandsGuard {
  std::map<std::string, Shell::Handler> before = extensions();
  bool kept = false;
  ~CommandsGuard() {
    if (!kept) {
      extensions() = before;
      return;
    }
    for (const auto& [name, h] : before) extensions()[name] = h;
  }
};

/// dlopen inside the registry's load transaction (Cinfo::beginLoad/endLoad). RTLD_GLOBAL: the
/// library's classes may be used by later libraries too. The library links against libantler,
/// so its classes register in this process's registry as it loads.
std::pair<void*, Cinfo::LoadResult> open_library(const std::string& path) {
  Cinfo::beginLoad(path);
  void* h = nullptr;
  try {
    h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  } catch (...) {
    Cinfo::endLoad(false);
    throw;
  }
  const char* why = h ? nullptr : dlerror();
  Cinfo::LoadResult res = Cinfo::endLoad(h != nullptr);
  if (!h)
    throw ValueError("loadLibrary: cannot load '" + path + "': " + (why ? why : "unknown error"));
  return {h, std::move(res)};
}

/// A library with its own copy of antler's core (a second libantler) may bind its classes to a
/// registry of its own (when libantler was loaded without RTLD_GLOBAL, as Python loads its
/// extensions): nothing clashes, and nothing it declares would ever be usable. Refuses it too.
void refuse_own_core(void* h, const std::string& path, const Cinfo::LoadResult& res) {
  void* theirs = res.clash.empty() && res.added.empty()
                     ? dlsym(h, "_ZN6antler5Cinfo13registerClassEPKS0_")
                     : nullptr;
  if (!theirs) return;
  Dl_info a{}, b{};
  const bool known =
      dladdr(theirs, &a) != 0 && dladdr(reinterpret_cast<void*>(&Cinfo::registerClass), &b) != 0;
  if (!known || a.dli_fbase == b.dli_fbase) return;
  const std::string msg =
      "loadLibrary: cannot load '" + path + "': it contains its own copy of antler's core (" +
      "antler::Cinfo is defined in " + (a.dli_fname ? a.dli_fname : path) +
      ", but antler is already loaded from " + (b.dli_fname ? b.dli_fname : "the program") +
      "), so its classes would go to a registry of their own; nothing of the library was "
      "registered (link the library against the libantler that is loaded)";
  dlclose(h);
  throw ValueError(msg);
}

/// A class name already registered refuses the whole library: it is closed, and the refusal
/// remembered if the loader keeps it resident.
[[noreturn]] void refuse_clash(void* h, const std::string& path, const Cinfo::LoadResult& res) {
  std::string file = loaded_file(h);
  if (file.empty()) file = path;
  const std::string newLib = res.clashNewLibrary.empty() ? file : res.clashNewLibrary;
  const std::string msg =
      "loadLibrary: cannot load '" + path + "': it registers a class named '" + res.clash +
      "' (in " + newLib + "), but a class of that name is already registered (from " +
      (res.clashOldLibrary.empty() ? std::string("the program") : res.clashOldLibrary) +
      "); nothing of the library was registered (class names must be unique: rename the class, "
      "and load antler's own classes only once)";
  dlclose(h);
  if (void* still = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    refused_libraries()[still] = {loaded_file(still), msg};
    dlclose(still);
  }
  throw ValueError(msg);
}

}  // namespace

// Loading runs the library's static initializers, which register its classes. They must not
// throw inside dlopen, so the registry records the load (Cinfo::beginLoad/endLoad) and the
// verdict comes after dlopen returns: a class name already registered (e.g. by a second copy
// of libantler) refuses the whole library, which is unregistered again and closed.
std::vector<std::string> do_load_library(Simulation&, const std::string& path) {
  if (path.empty())
    throw ValueError(
        "loadLibrary: empty path (give the file of a shared library of antler "
        "classes, e.g. 'build-user/libmy_cells.so')");
  check_library_file(path);
  CommandsGuard commands;
  auto [h, res] = open_library(path);
  refuse_own_core(h, path, res);
  if (!res.clash.empty()) refuse_clash(h, path, res);
  auto& refused = refused_libraries();
  if (res.added.empty()) {
    // Loaded before and kept resident after a refusal: the same refusal again.
    if (auto it = refused.find(h); it != refused.end() && it->second.first == loaded_file(h)) {
      const std::string msg = it->second.second;
      dlclose(h);
      throw ValueError(msg);
    }
  } else {
    refused.erase(h);
  }
  commands.kept = true;
  return res.added;
}

void do_extension(Simulation& sim, Reader& r, Writer& w) {
  const auto name = r.get<std::string>();
  auto it = extensions().find(name);
  if (it == extensions().end()) throw InternalError("unknown extension command " + name);
  it->second(sim, r, w);
}

}  // namespace antler::shell_detail
