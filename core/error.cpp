#include "core/error.hpp"

#include <charconv>
#include <cmath>

namespace antler {

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

std::string quoted(std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  std::string out = "'";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += ch;
    } else if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out + "'";
}

const char* to_string(ErrorKind k) {
  switch (k) {
    case ErrorKind::value:
      return "value error";
    case ErrorKind::path:
      return "path error";
    case ErrorKind::field:
      return "field error";
    case ErrorKind::type:
      return "type error";
    case ErrorKind::index:
      return "index error";
    case ErrorKind::class_:
      return "class error";
    case ErrorKind::msg:
      return "message error";
    case ErrorKind::state:
      return "state error";
    case ErrorKind::comm:
      return "communication error";
  }
  return "error";
}

void throw_error(ErrorKind kind, const std::string& what) {
  switch (kind) {
    case ErrorKind::value:
      throw ValueError(what);
    case ErrorKind::path:
      throw PathError(what);
    case ErrorKind::field:
      throw FieldError(what);
    case ErrorKind::type:
      throw TypeError(what);
    case ErrorKind::index:
      throw IndexError(what);
    case ErrorKind::class_:
      throw ClassError(what);
    case ErrorKind::msg:
      throw MsgError(what);
    case ErrorKind::state:
      throw StateError(what);
    case ErrorKind::comm:
      throw CommError(what);
  }
  throw CommError(what);
}

std::string join_names(const std::vector<std::string>& names, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i == limit) {
      out += ", ...";
      break;
    }
    if (i) out += ", ";
    out += names[i];
  }
  return out;
}

}  // namespace antler
