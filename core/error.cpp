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

std::optional<std::string> Exception::detail(std::string_view key) const {
  for (const auto& [k, v] : details_)
    if (k == key) return v;
  return std::nullopt;
}

FieldError::FieldError(const std::string& w, std::string_view cls, std::string_view field,
                       const std::vector<std::string>& valid)
    : FieldError(w, ErrorDetails{{"class", std::string(cls)},
                                 {"field", std::string(field)},
                                 {"valid", join_names(valid, valid.size())}}) {}

std::vector<std::string> FieldError::valid() const {
  std::vector<std::string> out;
  const std::optional<std::string> v = detail("valid");
  if (!v || v->empty()) return out;
  std::size_t at = 0;
  for (;;) {
    const std::size_t comma = v->find(", ", at);
    out.push_back(v->substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) return out;
    at = comma + 2;
  }
}

std::optional<std::uint64_t> IndexError::number(std::string_view key) const {
  const std::optional<std::string> v = detail(key);
  std::uint64_t x = 0;
  if (!v || std::from_chars(v->data(), v->data() + v->size(), x).ec != std::errc()) return {};
  return x;
}

void throw_error(ErrorKind kind, const std::string& what, ErrorDetails d) {
  switch (kind) {
    case ErrorKind::value:
      throw ValueError(what);
    case ErrorKind::path:
      throw PathError(what, std::move(d));
    case ErrorKind::field:
      throw FieldError(what, std::move(d));
    case ErrorKind::type:
      throw TypeError(what, std::move(d));
    case ErrorKind::index:
      throw IndexError(what, std::move(d));
    case ErrorKind::class_:
      throw ClassError(what, std::move(d));
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
