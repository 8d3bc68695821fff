#include "core/detail/path.hpp"

#include <charconv>

#include "core/context.hpp"
#include "core/element.hpp"
#include "core/error.hpp"

namespace antler {

namespace {

// Largest index a path may hold (Index's top value is reserved).
constexpr unsigned long long kMaxIndex = 0xFFFFFFFEull;

/// s in single quotes with control characters, quotes, backslashes and bytes >= 0x7f escaped
/// (\x00, \n, ...): a name shows exactly as given and a NUL cannot cut the message short.
std::string str(std::string_view s) {
  return std::string(s);
}

/// The non-empty components of a path ("//" and a trailing '/' add none).
std::vector<std::string_view> split(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

/// One path component: a name and, if it has a bracket, the index text as written.
struct Component {
  std::string_view name;
  bool hasIndex = false;
  std::string_view indexText;
};

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (ch < '0' || ch > '9') return false;
  return true;
}

Component parse_component(std::string_view s, std::string_view path, std::string_view op) {
  Component c;
  const auto lb = s.find('[');
  if (lb == std::string_view::npos) {
    if (s.find(']') != std::string_view::npos)
      throw ValueError(str(op) + ": malformed path " + quoted(path) + " (']' without '[' in " +
                       quoted(s) + ")");
    c.name = s;
    return c;
  }
  const auto rb = s.find(']', lb);
  if (rb == std::string_view::npos)
    throw ValueError(str(op) + ": malformed path " + quoted(path) + " (unclosed '[' in " +
                     quoted(s) + ")");
  if (rb != s.size() - 1)
    throw ValueError(str(op) + ": malformed path " + quoted(path) + " (text after ']' in " +
                     quoted(s) + "; an index ends its component, e.g. 'a[3]/b')");
  c.name = s.substr(0, lb);
  c.hasIndex = true;
  c.indexText = s.substr(lb + 1, rb - lb - 1);
  if (c.name.empty())
    throw ValueError(str(op) + ": malformed path " + quoted(path) + " (index " + quoted(s) +
                     " without a name)");
  if (!all_digits(c.indexText))
    throw ValueError(str(op) + ": malformed index " + quoted(c.indexText) + " in path " +
                     quoted(path) + " (expected a non-negative integer)");
  return c;
}

/// The index a component selects; IndexError (naming the index as written) if it is not below
/// `limit`, the number of entries, where known.
Index index_of(const Component& c, const Element* e, bool knownLimit, Index limit,
               std::string_view path, std::string_view op) {
  if (!c.hasIndex) return 0;
  unsigned long long v = 0;
  auto [p, ec] = std::from_chars(c.indexText.data(), c.indexText.data() + c.indexText.size(), v);
  const bool tooBig = ec == std::errc::result_out_of_range || v > kMaxIndex;
  if (!tooBig && (!knownLimit || v < limit)) return static_cast<Index>(v);
  if (!knownLimit)
    throw IndexError(str(op) + ": index " + str(c.indexText) + " out of range for " + e->path() +
                     " (indices are at most " + std::to_string(kMaxIndex) + "; path " +
                     quoted(path) + ")");
  throw IndexError(
      str(op) + ": index " + str(c.indexText) + " out of range for " + e->path() + ", which has " +
          std::to_string(limit) + " entries (" +
          (limit == 0 ? std::string("no valid index") : "valid: 0.." + std::to_string(limit - 1)) +
          "; path " + quoted(path) + ")",
      v, limit);
}

std::vector<std::string> child_names(const Element* e) {
  std::vector<std::string> out;
  const ElementTable& t = e->context().elements();
  for (Id c : e->children())
    if (const Element* k = t.get(c)) out.push_back(k->name());
  return out;
}

/// One step of a walk: where it stands, with the indices it has there.
struct Step {
  Element* e;
  Index data, field;
};

/// How walk treats what it finds.
struct WalkMode {
  bool throwMissing = true;  ///< PathError for an unknown name (else an ObjId with no element)
  bool wholeOnly = false;    ///< a create's parent part: indices only where unambiguous
};

/// Resolves the components of `part` one by one from base (or from the root if part starts
/// with '/'), as a shell resolves a path: '.' stays, '..' goes back to where the walk was (its
/// indices included), or to the parent element from the start, and stays at the root. `path`
/// is the whole path as given, for messages.
ObjId walk(const ElementTable& t, std::string_view part, std::string_view path, std::string_view op,
           ObjId base, WalkMode mode) {
  Element* root = t.get(Id::root());
  std::vector<Step> steps;
  if (!part.empty() && part[0] == '/') {
    steps.push_back({root, 0, 0});
  } else {
    Element* b = t.get(base.id);
    if (!b)
      throw InternalError(str(op) + ": the base element of path " + quoted(path) + " is gone");
    steps.push_back({b, base.dataIndex, base.fieldIndex});
  }
  for (std::string_view s : split(part)) {
    if (s == "." || s == ".." || s.starts_with(".[") || s.starts_with("..[")) {
      if (s != "." && s != "..")
        throw ValueError(str(op) + ": malformed path " + quoted(path) +
                         " ('.' and '..' take no index: " + quoted(s) + ")");
      if (s == ".") continue;
      if (steps.size() > 1) {
        steps.pop_back();
      } else if (steps.back().e != root) {
        // '..' above where a relative walk began: the parent element (the entry a field
        // element belongs to keeps its index).
        const Step top = steps.back();
        Element* p = t.get(top.e->parent());
        if (!p) throw InternalError(str(op) + ": " + top.e->path() + " has no parent");
        steps.back() = {p, top.e->isField() ? top.data : 0, 0};
      }
      continue;
    }
    const Component c = parse_component(s, path, op);
    Element* cur = steps.back().e;
    Element* next = cur->child(std::string(c.name));
    if (!next) {
      if (!mode.throwMissing) return ObjId(Id(~0u));
      const auto kids = child_names(cur);
      throw PathError(str(op) + ": no element " + quoted(c.name) + " in " + cur->path() +
                          " (path " + quoted(path) + "; children of " + cur->path() + ": " +
                          (kids.empty() ? std::string("none") : join_names(kids)) + ")",
                      path);
    }
    Step step{next, steps.back().data, 0};
    if (next->isField()) {
      // The data index stays the parent's; field entries are counted on the owning node only.
      step.field = index_of(c, next, false, 0, path, op);
    } else {
      step.data = index_of(c, next, true, next->numData(), path, op);
      if (mode.wholeOnly && c.hasIndex && next->numData() != 1)
        throw ValueError(
            str(op) + ": path " + quoted(path) + " puts the new element under one entry, " +
            next->path() + "[" + str(c.indexText) + "], but children belong to the whole element " +
            next->path() + " (" + std::to_string(next->numData()) +
            " entries); leave out the index ('" + str(c.name) + "', not " + quoted(s) + ")");
    }
    steps.push_back(step);
  }
  const Step& end = steps.back();
  return ObjId(end.e->id(), end.data, end.field);
}

void check_not_empty(std::string_view path, std::string_view op) {
  if (path.empty())
    throw ValueError(str(op) + ": empty path (a path looks like '/model/neurons[3]')");
}

// ---- wildcards ----

struct Condition {
  enum Kind { type_eq, type_ne, isa } kind;
  std::string cls;
};

struct Pattern {
  std::string prefix;  // name, or prefix before '#'
  bool wildcard = false;
  bool recursive = false;  // '##'
  std::vector<Condition> conds;
};

/// True if a pattern component needs matching: a '#', or a bracket that is a condition rather
/// than an index.
bool is_wildcard(std::string_view s) {
  if (s.find('#') != std::string_view::npos) return true;
  const auto lb = s.find('[');
  if (lb == std::string_view::npos) return false;
  const auto rb = s.find(']', lb);
  return rb == std::string_view::npos || !all_digits(s.substr(lb + 1, rb - lb - 1)) ||
         rb != s.size() - 1;
}

Pattern parse_pattern(std::string_view s, std::string_view whole) {
  Pattern p;
  std::string_view body = s;
  const auto lb = s.find('[');
  if (lb != std::string_view::npos) {
    body = s.substr(0, lb);
    std::string_view rest = s.substr(lb);
    while (!rest.empty()) {
      if (rest[0] != '[' || rest.find(']') == std::string_view::npos)
        throw ValueError("wildcardFind: malformed condition in " + quoted(whole));
      const auto rb = rest.find(']');
      std::string_view cond = rest.substr(1, rb - 1);
      rest = rest.substr(rb + 1);
      // Several conditions may be joined by '&' inside one bracket.
      std::size_t i = 0;
      while (i <= cond.size()) {
        std::size_t j = cond.find('&', i);
        if (j == std::string_view::npos) j = cond.size();
        std::string_view one = cond.substr(i, j - i);
        i = j + 1;
        if (one.empty()) continue;
        Condition c{};
        if (one.starts_with("TYPE!="))
          c = {Condition::type_ne, str(one.substr(6))};
        else if (one.starts_with("TYPE=="))
          c = {Condition::type_eq, str(one.substr(6))};
        else if (one.starts_with("TYPE="))
          c = {Condition::type_eq, str(one.substr(5))};
        else if (one.starts_with("ISA="))
          c = {Condition::isa, str(one.substr(4))};
        else
          throw ValueError("wildcardFind: unknown condition " + quoted("[" + str(one) + "]") +
                           " in " + quoted(whole) +
                           " (valid: TYPE=C, TYPE!=C, ISA=C; indices are not allowed after a "
                           "wildcard)");
        p.conds.push_back(c);
      }
    }
  }
  if (body == "##") {
    p.wildcard = p.recursive = true;
  } else if (auto h = body.find('#'); h != std::string_view::npos) {
    if (h != body.size() - 1)
      throw ValueError("wildcardFind: '#' must end a name in " + quoted(whole));
    p.wildcard = true;
    p.prefix = str(body.substr(0, h));
  } else {
    p.prefix = str(body);
  }
  return p;
}

bool conds_ok(const Element* e, const Pattern& p) {
  for (const auto& c : p.conds) {
    const std::string& n = e->cinfo()->name();
    if (c.kind == Condition::type_eq && n != c.cls) return false;
    if (c.kind == Condition::type_ne && n == c.cls) return false;
    if (c.kind == Condition::isa && !e->cinfo()->isA(c.cls)) return false;
  }
  return true;
}

bool name_ok(const Element* e, const Pattern& p) {
  if (!p.wildcard) return e->name() == p.prefix;
  return e->name().starts_with(p.prefix);
}

/// The pattern as an automaton run down the tree: `active` holds the pattern positions still
/// open at cur (sorted, each once). A child gets position k+1 where it matches component k,
/// and keeps k where component k is '##' (it may match deeper down); it is a match if it
/// reaches the end. Each element is visited once, with the set of every way of reaching it,
/// so '##/##' costs no more than '##' per element and nothing is found twice; matches come out
/// in preorder because a child is reported before its subtree is searched.
void match(const Element* cur, const std::vector<Pattern>& pats,
           const std::vector<std::size_t>& active, std::vector<ObjId>& out) {
  const std::size_t end = pats.size();
  std::vector<std::size_t> next;
  const ElementTable& t = cur->context().elements();
  for (Id cid : cur->children()) {
    const Element* c = t.get(cid);
    if (!c) continue;
    next.clear();
    auto add = [&next](std::size_t k) {
      if (next.empty() || next.back() < k) next.push_back(k);  // values arrive non-decreasing
    };
    for (std::size_t k : active) {
      const Pattern& p = pats[k];
      if (p.recursive) {
        add(k);
        if (conds_ok(c, p)) add(k + 1);
      } else if (name_ok(c, p) && conds_ok(c, p)) {
        add(k + 1);
      }
    }
    if (next.empty()) continue;
    if (next.back() == end) {
      out.emplace_back(c->id());
      next.pop_back();
      if (next.empty()) continue;
    }
    match(c, pats, std::vector<std::size_t>(next), out);
  }
}

}  // namespace

ObjId resolve_path(const ElementTable& t, std::string_view path, std::string_view operation,
                   ObjId base) {
  check_not_empty(path, operation);
  return walk(t, path, path, operation, base, WalkMode{});
}

ObjId find_path(const ElementTable& t, std::string_view path, ObjId base) {
  check_not_empty(path, "find");
  return walk(t, path, path, "find", base, WalkMode{.throwMissing = false});
}

bool valid_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char ch : name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.'))
      return false;
  return true;
}

std::pair<Element*, std::string> resolve_new_path(const ElementTable& t, std::string_view path,
                                                  Index n, std::string_view op, ObjId base) {
  if (n == 0)
    throw ValueError(str(op) + ": cannot create " + quoted(path) +
                     " with 0 entries (n must be >= 1)");
  check_not_empty(path, op);
  std::string_view p = path;
  while (!p.empty() && p.back() == '/') p.remove_suffix(1);
  if (p.empty())
    throw ValueError(str(op) + ": path " + quoted(path) +
                     " is the root element, which always exists; name the new element (e.g. "
                     "'/model')");
  const auto slash = p.rfind('/');
  const std::string_view parent = slash == std::string_view::npos ? std::string_view()
                                  : slash == 0                    ? p.substr(0, 1)
                                                                  : p.substr(0, slash);
  const std::string_view name = slash == std::string_view::npos ? p : p.substr(slash + 1);
  if (name == "." || name == "..")
    throw ValueError(str(op) + ": path " + quoted(path) + " ends in " + quoted(name) +
                     ", which is not an element name ('.' and '..' name an element that "
                     "exists or its parent; give the new element a name)");
  if (name.find('[') != std::string_view::npos || name.find(']') != std::string_view::npos)
    throw ValueError(str(op) + ": the new name " + quoted(name) + " in path " + quoted(path) +
                     " has a bracket; a new element's name takes no index (the number of "
                     "entries is create's n)");
  if (!valid_name(name))
    throw ValueError(str(op) + ": invalid name " + quoted(name) + " in path " + quoted(path) +
                     " (use letters, digits, '_', '-', '.')");
  Element* pe = t.get(
      parent.empty() ? base.id : walk(t, parent, path, op, base, WalkMode{.wholeOnly = true}).id);
  if (!pe) throw InternalError(str(op) + ": the base element of path " + quoted(path) + " is gone");
  return {pe, str(name)};
}

std::vector<ObjId> wildcard_find(const ElementTable& t, std::string_view pattern) {
  check_not_empty(pattern, "wildcardFind");
  const auto parts = split(pattern);
  std::size_t first = 0;  // first component that needs matching
  while (first < parts.size() && !is_wildcard(parts[first])) ++first;
  if (first == parts.size()) {
    // No wildcard: the one element the path names, exactly as a lookup finds it.
    const ObjId o = walk(t, pattern, pattern, "wildcardFind", ObjId(Id::root()),
                         WalkMode{.throwMissing = false});
    if (t.get(o.id)) return {o};
    return {};
  }
  // The literal part before the first wildcard is a path ('.' and '..' included).
  std::string literal = "/";
  for (std::size_t i = 0; i < first; ++i) literal.append(parts[i]).append("/");
  const ObjId start =
      walk(t, literal, pattern, "wildcardFind", ObjId(Id::root()), WalkMode{.throwMissing = false});
  std::vector<Pattern> pats;
  for (std::size_t i = first; i < parts.size(); ++i) {
    if (parts[i] == ".") continue;
    if (parts[i] == "..")
      throw ValueError("wildcardFind: '..' after a wildcard in " + quoted(pattern) +
                       " (it would name the parents of every match; put '..' before the first "
                       "wildcard)");
    pats.push_back(parse_pattern(parts[i], pattern));
  }
  std::vector<ObjId> out;
  if (const Element* e = t.get(start.id)) match(e, pats, {0}, out);
  return out;
}

}  // namespace antler
