#include "core/path.hpp"

#include <charconv>

#include "core/element.hpp"
#include "core/error.hpp"

namespace antler {

namespace {

struct Component {
  std::string name;
  bool hasIndex = false;
  Index index = 0;
};

std::vector<std::string> split(std::string_view path) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    // '/' inside brackets (e.g. none today) is not special; brackets never hold '/'.
    if (j > i) out.emplace_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

Component parse_component(const std::string& s, std::string_view path, std::string_view op) {
  Component c;
  const auto lb = s.find('[');
  if (lb == std::string::npos) {
    c.name = s;
  } else {
    if (s.back() != ']')
      throw ValueError(std::string(op) + ": malformed path '" + std::string(path) +
                       "' (unclosed '[')");
    c.name = s.substr(0, lb);
    const std::string idx = s.substr(lb + 1, s.size() - lb - 2);
    unsigned long v = 0;
    auto [p, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), v);
    if (ec != std::errc() || p != idx.data() + idx.size() || idx.empty() || v > 0xFFFFFFFEul)
      throw ValueError(std::string(op) + ": malformed index '[" + idx + "]' in path '" +
                       std::string(path) + "' (expected a non-negative integer)");
    c.hasIndex = true;
    c.index = static_cast<Index>(v);
  }
  if (c.name.empty())
    throw ValueError(std::string(op) + ": malformed path '" + std::string(path) + "' (empty name)");
  return c;
}

std::vector<std::string> child_names(const Element* e) {
  std::vector<std::string> out;
  for (Id c : e->children())
    if (const Element* k = c.element()) out.push_back(k->name());
  return out;
}

ObjId walk(std::string_view path, std::string_view op, bool throwMissing) {
  if (path.empty()) throw ValueError(std::string(op) + ": empty path");
  Element* cur = Id::root().element();
  Index data = 0, field = 0;
  for (const std::string& s : split(path)) {
    const Component c = parse_component(s, path, op);
    Element* next = cur->child(c.name);
    if (!next) {
      if (!throwMissing) return ObjId(Id(~0u));
      const auto kids = child_names(cur);
      throw PathError(std::string(op) + ": no element '" + c.name + "' in " + cur->path() +
                      " (path '" + std::string(path) + "'; children of " + cur->path() + ": " +
                      (kids.empty() ? std::string("none") : join_names(kids)) + ")");
    }
    if (next->isField()) {
      field = c.hasIndex ? c.index : 0;  // data stays the parent's index
    } else {
      data = c.hasIndex ? c.index : 0;
      field = 0;
      if (data >= next->numData())
        throw IndexError(std::string(op) + ": index " + std::to_string(data) +
                         " out of range for " + next->path() + ", which has " +
                         std::to_string(next->numData()) + " entries");
    }
    cur = next;
  }
  return ObjId(cur->id(), data, field);
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

Pattern parse_pattern(const std::string& s, std::string_view whole) {
  Pattern p;
  std::string body = s;
  const auto lb = s.find('[');
  if (lb != std::string::npos) {
    body = s.substr(0, lb);
    std::string rest = s.substr(lb);
    while (!rest.empty()) {
      if (rest[0] != '[' || rest.find(']') == std::string::npos)
        throw ValueError("wildcardFind: malformed condition in '" + std::string(whole) + "'");
      const auto rb = rest.find(']');
      std::string cond = rest.substr(1, rb - 1);
      rest = rest.substr(rb + 1);
      // Several conditions may be joined by '&' inside one bracket.
      std::size_t i = 0;
      while (i <= cond.size()) {
        std::size_t j = cond.find('&', i);
        if (j == std::string::npos) j = cond.size();
        std::string one = cond.substr(i, j - i);
        i = j + 1;
        if (one.empty()) continue;
        Condition c{};
        if (one.rfind("TYPE!=", 0) == 0)
          c = {Condition::type_ne, one.substr(6)};
        else if (one.rfind("TYPE==", 0) == 0)
          c = {Condition::type_eq, one.substr(6)};
        else if (one.rfind("TYPE=", 0) == 0)
          c = {Condition::type_eq, one.substr(5)};
        else if (one.rfind("ISA=", 0) == 0)
          c = {Condition::isa, one.substr(4)};
        else
          throw ValueError("wildcardFind: unknown condition '[" + one + "]' in '" +
                           std::string(whole) + "' (valid: TYPE=C, TYPE!=C, ISA=C)");
        p.conds.push_back(c);
      }
    }
  }
  if (body == "##") {
    p.wildcard = p.recursive = true;
  } else if (auto h = body.find('#'); h != std::string::npos) {
    if (h != body.size() - 1)
      throw ValueError("wildcardFind: '#' must end a name in '" + std::string(whole) + "'");
    p.wildcard = true;
    p.prefix = body.substr(0, h);
  } else {
    p.prefix = body;
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
  return e->name().rfind(p.prefix, 0) == 0;
}

void match(const Element* cur, const std::vector<Pattern>& pats, std::size_t k,
           std::vector<ObjId>& out) {
  if (k == pats.size()) {
    out.emplace_back(cur->id());
    return;
  }
  const Pattern& p = pats[k];
  for (Id cid : cur->children()) {
    const Element* c = cid.element();
    if (!c) continue;
    if (p.recursive) {
      if (conds_ok(c, p)) match(c, pats, k + 1, out);
      match(c, pats, k, out);  // descend further
    } else if (name_ok(c, p) && conds_ok(c, p)) {
      match(c, pats, k + 1, out);
    }
  }
}

}  // namespace

ObjId resolve_path(std::string_view path, std::string_view operation) {
  return walk(path, operation, true);
}

ObjId find_path(std::string_view path) {
  return walk(path, "find", false);
}

bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (char ch : name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.'))
      return false;
  return true;
}

std::pair<std::string, std::string> split_new_path(std::string_view path, std::string_view op) {
  std::string p(path);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const auto slash = p.rfind('/');
  std::string parent = slash == std::string::npos ? "/" : p.substr(0, slash);
  if (parent.empty()) parent = "/";
  std::string name = slash == std::string::npos ? p : p.substr(slash + 1);
  if (!valid_name(name))
    throw ValueError(std::string(op) + ": invalid name '" + name + "' in path '" +
                     std::string(path) + "' (use letters, digits, '_', '-', '.')");
  return {parent, name};
}

std::vector<ObjId> wildcard_find(std::string_view pattern) {
  std::vector<Pattern> pats;
  for (const std::string& s : split(pattern)) pats.push_back(parse_pattern(s, pattern));
  std::vector<ObjId> out;
  bool any = false;
  for (auto& p : pats) any = any || p.wildcard || !p.conds.empty();
  if (!any) {
    ObjId o = find_path(pattern);
    if (o.element()) out.push_back(o);
    return out;
  }
  match(Id::root().element(), pats, 0, out);
  return out;
}

}  // namespace antler
