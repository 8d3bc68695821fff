#pragma once
/// Paths ("/model/neurons[3]/synapse[2]") and wildcard patterns ("/model/##[TYPE=IntFire]"),
/// resolved in one simulation's ElementTable.
///
/// What a path means (every lookup, create, exists and wildcardFind agree on it):
/// - Components are separated by '/'; empty components ("//", a trailing '/') are ignored. A path
///   that starts with '/' starts at the root, any other path at a base element (the root unless
///   a caller passes one: the hook for a future current element, ce/pwd).
/// - "name[i]" selects data entry i of a data element, or field entry i of a field element (the
///   data index then stays the parent's); no index means 0. i is decimal digits; a number at or
///   past the entry count is an IndexError naming the index as written and the valid range, any
///   other text ('-1', 'x', '') a ValueError naming it.
/// - "." is the element itself and ".." its parent, resolved step by step as a shell does:
///   "/net/./a" is "/net/a", "/net/a/.." is "/net" with the indices it had there, "/net/.." is
///   "/", and ".." at the root stays at the root ("/.." is "/", as in POSIX). Each component
///   before a ".." must exist. "." and ".." take no index.
/// - Creating: the last component is the new name (letters, digits, '_', '-', '.'; not "." or
///   "..", no index: the number of entries is create's n, which must be >= 1). Children belong
///   to a whole element, not to one entry, so an index in the parent part is accepted only where
///   it is unambiguous: "[0]" on an element with one entry (the form ObjId paths print,
///   "/model[0]/x"). "/net/n[2]/x" with n holding several entries is a ValueError.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/export.hpp"
#include "core/id.hpp"

namespace antler {

class ElementTable;

/// The object a path names (see above); relative paths start at base. `operation` prefixes
/// errors. PathError for an unknown name (listing the children that exist), IndexError for an
/// index out of range, ValueError for a malformed path.
ANTLER_API ObjId resolve_path(const ElementTable& t, std::string_view path,
                              std::string_view operation, ObjId base = ObjId(Id::root()));

/// Like resolve_path, but returns an ObjId that t does not resolve (t.get(o.id) is nullptr)
/// instead of throwing PathError (malformed paths and bad indices still throw).
ObjId find_path(const ElementTable& t, std::string_view path, ObjId base = ObjId(Id::root()));

/// Where a new element of n entries at `path` goes: its parent and its name. ValueError for
/// n == 0, an empty path, the root, a last component that is not a valid name ("." and ".."
/// included) or carries an index, and an ambiguous index in the parent part; PathError or
/// IndexError if the parent cannot be resolved. Does not check whether the name is taken.
std::pair<Element*, std::string> resolve_new_path(const ElementTable& t, std::string_view path,
                                                  Index n, std::string_view operation,
                                                  ObjId base = ObjId(Id::root()));

/// True if name is a valid element name: [A-Za-z0-9_.-]+, but not "." or "..".
bool valid_name(std::string_view name);

/// Elements matching a wildcard pattern, each once, in tree order (preorder, children in
/// creation order). Each component may be a name, a prefix with '#' ("neu#"), '#' (any child)
/// or '##' (any descendant, at depth >= 1), optionally followed by conditions [TYPE=C],
/// [TYPE!=C], [ISA=C], joined by '&'. "." and ".." may appear before the first wildcard
/// component (resolved as in paths); "." after it is ignored and ".." after it is a ValueError.
/// Patterns without wildcards return the one element the path names (or none). The search visits
/// each element at most once: linear in the size of the tree times the pattern's length.
std::vector<ObjId> wildcard_find(const ElementTable& t, std::string_view pattern);

}  // namespace antler
