#pragma once
/// Paths ("/model/neurons[3]/synapse[2]") and wildcard patterns ("/model/##[TYPE=IntFire]").
#include <string>
#include <string_view>
#include <vector>

#include "core/id.hpp"

namespace antler {

/// The object a path names. Indices select the data entry ("neurons[3]") and, after a field
/// element ("synapse[2]"), the field entry; a missing index means 0. `operation` prefixes errors.
/// PathError for an unknown name (listing the children that exist), IndexError for a data index
/// out of range, ValueError for a malformed path.
ObjId resolve_path(std::string_view path, std::string_view operation);

/// Like resolve_path, but returns an ObjId whose element() is nullptr instead of throwing
/// PathError (malformed paths and bad indices still throw).
ObjId find_path(std::string_view path);

/// Splits "/a/b[3]" into parent path "/a" and last name "b" (index not allowed). ValueError if
/// the name is empty or has characters outside [A-Za-z0-9_.-].
std::pair<std::string, std::string> split_new_path(std::string_view path,
                                                   std::string_view operation);

/// True if name is a valid element name.
bool valid_name(std::string_view name);

/// Elements matching a wildcard pattern, in tree order. Each component may be a name, a prefix
/// with '#' ("neu#"), '#' (any child) or '##' (any descendant), optionally followed by conditions
/// [TYPE=C], [TYPE!=C], [ISA=C], joined by '&'. Patterns without wildcards return the one element.
std::vector<ObjId> wildcard_find(std::string_view pattern);

}  // namespace antler
