#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Errors. Three roots: antler::Error for bad user input (it names the operation, the offending
/// thing and the valid choices), antler::SystemError for a failure of the system antler runs on
/// (MPI, a corrupted buffer, nodes that disagree), both an antler::Exception, which carries the
/// kind the Python layer maps to an exception type and which crosses nodes with the message; and
/// antler::InternalError for bugs in antler itself, as in Arbor.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace antler {

/// What kind of user error; the Python layer maps each to a built-in exception type.
enum class ErrorKind : std::uint8_t {
  value = 0,   ///< a bad value or argument (ValueError)
  path = 1,    ///< an unknown path or a name clash (ValueError)
  field = 2,   ///< an unknown field (AttributeError)
  type = 3,    ///< a wrong type (TypeError)
  index = 4,   ///< an index out of range (IndexError)
  class_ = 5,  ///< an unknown class (ValueError)
  msg = 6,     ///< an unknown or ill-formed message (ValueError)
  state = 7,   ///< a command not allowed now, e.g. while the clock runs (RuntimeError)
  comm = 8,    ///< corrupted buffer or disagreement between nodes (RuntimeError)
};

/// Name of an error kind, for messages.
const char* to_string(ErrorKind k);

/// Facts about an error as (key, value) text pairs, e.g. {"index", "7"}, {"size", "5"}: what a
/// program reads instead of parsing the message. They cross nodes with it.
using ErrorDetails = std::vector<std::pair<std::string, std::string>>;

/// What Error and SystemError share: the kind and the details, reported across nodes and to
/// Python.
class Exception : public std::runtime_error {
 public:
  Exception(ErrorKind kind, const std::string& what, ErrorDetails details = {})
      : std::runtime_error(what), kind_(kind), details_(std::move(details)) {}
  /// The kind of the error.
  ErrorKind kind() const noexcept { return kind_; }
  /// Every fact the thrower recorded, in the order it recorded them.
  const ErrorDetails& details() const noexcept { return details_; }
  /// The fact recorded under key, if any.
  std::optional<std::string> detail(std::string_view key) const;

 private:
  ErrorKind kind_;
  ErrorDetails details_;
};

/// Root of every error caused by user input.
class Error : public Exception {
 public:
  using Exception::Exception;
};

/// Root of every failure of the system antler runs on, not of its input: the user's script is
/// right, and something below it (MPI, a node, a buffer in transit) is not.
class SystemError : public Exception {
 public:
  using Exception::Exception;
};

/// An unknown path, or a name already taken.
struct PathError : Error {
  explicit PathError(const std::string& w, ErrorDetails d = {})
      : Error(ErrorKind::path, w, std::move(d)) {}
  /// Where the path went wrong: {"path": the path as given} (when the thrower knew it).
  PathError(const std::string& w, std::string_view path)
      : PathError(w, ErrorDetails{{"path", std::string(path)}}) {}
  std::optional<std::string> path() const { return detail("path"); }
};
/// An unknown field of a class.
struct FieldError : Error {
  explicit FieldError(const std::string& w, ErrorDetails d = {})
      : Error(ErrorKind::field, w, std::move(d)) {}
  /// {"class", "field", "valid": the fields there are, comma-separated}.
  FieldError(const std::string& w, std::string_view cls, std::string_view field,
             const std::vector<std::string>& valid);
  std::optional<std::string> field() const { return detail("field"); }
  std::optional<std::string> className() const { return detail("class"); }
  /// The fields that would have been valid.
  std::vector<std::string> valid() const;
};
/// A value of the wrong type.
struct TypeError : Error {
  explicit TypeError(const std::string& w, ErrorDetails d = {})
      : Error(ErrorKind::type, w, std::move(d)) {}
  /// {"expected", "got"}: the type the field has and the type given.
  TypeError(const std::string& w, std::string_view expected, std::string_view got)
      : TypeError(w, ErrorDetails{{"expected", std::string(expected)}, {"got", std::string(got)}}) {
  }
  std::optional<std::string> expected() const { return detail("expected"); }
  std::optional<std::string> got() const { return detail("got"); }
};
/// An index out of range.
struct IndexError : Error {
  explicit IndexError(const std::string& w, ErrorDetails d = {})
      : Error(ErrorKind::index, w, std::move(d)) {}
  /// {"index", "size"}: the index given and the number of entries (valid: 0 .. size - 1).
  IndexError(const std::string& w, std::uint64_t index, std::uint64_t size)
      : IndexError(
            w, ErrorDetails{{"index", std::to_string(index)}, {"size", std::to_string(size)}}) {}
  std::optional<std::uint64_t> index() const { return number("index"); }
  std::optional<std::uint64_t> size() const { return number("size"); }

 private:
  std::optional<std::uint64_t> number(std::string_view key) const;
};
/// An unknown class.
struct ClassError : Error {
  explicit ClassError(const std::string& w, ErrorDetails d = {})
      : Error(ErrorKind::class_, w, std::move(d)) {}
  std::optional<std::string> className() const { return detail("class"); }
};
/// An unknown message kind or an ill-formed message.
struct MsgError : Error {
  explicit MsgError(const std::string& w) : Error(ErrorKind::msg, w) {}
};
/// A bad value.
struct ValueError : Error {
  explicit ValueError(const std::string& w) : Error(ErrorKind::value, w) {}
};
/// A command that is not allowed in the current state.
struct StateError : Error {
  explicit StateError(const std::string& w) : Error(ErrorKind::state, w) {}
};
/// A corrupted buffer, a failed MPI call or a disagreement between nodes.
struct CommError : SystemError {
  explicit CommError(const std::string& w) : SystemError(ErrorKind::comm, w) {}
};

/// Raised on a node whose part of an operation that runs on every node succeeded while another
/// node's part failed: the Shell reports that node's error, and this one only if none is known.
struct FailedElsewhere : CommError {
  explicit FailedElsewhere(const std::string& op) : CommError(op + " failed on another node") {}
};

/// A bug in antler: an invariant that does not hold.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& w) : std::logic_error("antler internal error: " + w) {}
};

/// Throws the Error subclass that matches kind, with its details (used to re-raise errors from
/// other nodes).
[[noreturn]] void throw_error(ErrorKind kind, const std::string& what, ErrorDetails details = {});

/// The shortest text that reads back as exactly v ("0.1", "1e+300", "nan", "-inf").
std::string format_double(double v);

/// s in single quotes, with control characters and bytes >= 0x7f escaped (\x00, \n, ...), so
/// that a message shows a name exactly as given and nothing in it can cut the message short.
std::string quoted(std::string_view s);

/// "a, b, c" (at most `limit` names, then ", ...").
std::string join_names(const std::vector<std::string>& names, std::size_t limit = 40);

}  // namespace antler
#pragma GCC visibility pop
