// The Shell's client side of field access: set, get, vectors, lookup fields and calls, each
// routed to the node that owns the object (handlers_fields.cpp runs them there).
#include <cstring>

#include "shell/detail/handlers.hpp"
#include "shell/shell.hpp"
#include "shell/simulation.hpp"

namespace antler {

using namespace shell_detail;

void Shell::setPacked(ObjId obj, std::string_view field, const std::type_info& type,
                      const ByteBuffer& value) {
  ByteBuffer c = command(Op::set);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  c.append(value.data(), value.size());
  dispatch(c);
}

ByteBuffer Shell::getPacked(ObjId obj, std::string_view field, const std::type_info& type) {
  ByteBuffer c = command(Op::get);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  auto rep = dispatch(c);
  const Element* e = sim_.elements().get(obj.id);
  return std::move(rep[static_cast<std::size_t>(e ? e->owner(obj.dataIndex) : 0)]);
}

ByteBuffer Shell::getVecPacked(ObjId obj, std::string_view field, const std::type_info& type,
                               bool whole) {
  ByteBuffer c = command(Op::getVec);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  w.put<bool>(whole);
  auto rep = dispatch(c);
  const Element* e = sim_.elements().get(obj.id);
  if (e->isGlobal() || rep.size() == 1) return std::move(rep[0]);
  ByteBuffer out;
  std::size_t total = 0;
  for (auto& b : rep) total += b.size();
  out.reserve(total);
  for (auto& b : rep) out.append(b.data(), b.size());  // node order is global index order
  return out;
}

void Shell::setVecPacked(ObjId obj, std::string_view field, const std::type_info& type,
                         const ByteBuffer& values, std::uint64_t n, bool whole) {
  setVecPacked(obj, field, type, whole, [&](ByteBuffer& c) {
    c.append(values.data(), values.size());
    return n;
  });
}

void Shell::setVecPacked(ObjId obj, std::string_view field, const std::type_info& type, bool whole,
                         const std::function<std::uint64_t(ByteBuffer&)>& pack) {
  ByteBuffer c = command(Op::setVec);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  w.put<bool>(whole);
  const std::size_t countAt = c.size();
  w.put<std::uint64_t>(0);
  const std::uint64_t n = pack(c);
  std::memcpy(c.data() + countAt, &n, sizeof n);
  dispatch(c);
}

void Shell::pairFill(std::uint32_t msg, std::span<const Index> src, std::span<const Index> dest,
                     const std::vector<PairValues>& fields) {
  if (fields.empty()) return pairFill(msg, src, dest);
  for (const PairValues& f : fields)
    if (!f.type || (!f.pack && f.count && f.packed.empty()))
      throw ValueError("pairFill: field '" + f.field + "' has no values");
  if (numNodes() == 1) {  // the pairs where they lie; each field's values packed once
    std::vector<ByteBuffer> packed(fields.size());
    std::vector<PairFieldValues> given(fields.size());
    for (std::size_t i = 0; i < fields.size(); ++i) {
      given[i].field = fields[i].field;
      given[i].type = {fields[i].type->name(), type_name(*fields[i].type)};
      if (fields[i].pack) {
        given[i].n = fields[i].pack(packed[i]);
        given[i].at = packed[i].data();
        given[i].bytes = packed[i].size();
      } else {
        given[i].n = fields[i].count;
        given[i].at = fields[i].packed.data();
        given[i].bytes = fields[i].packed.size();
      }
    }
    runHere("pairFill", [&](Simulation& sim) { pair_fill_values(sim, msg, src, dest, given); });
    return;
  }
  ByteBuffer c = command(Op::pairFillValues);
  Writer w(c);
  w.put<std::uint32_t>(msg);
  ArrayView<Index>(src).write(w);
  ArrayView<Index>(dest).write(w);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(fields.size()));
  for (const PairValues& f : fields) {
    w.put<std::string>(f.field);
    put_type(w, *f.type);
    const std::size_t at = c.size();  // the count and the bytes, written once packed
    w.put<std::uint64_t>(0).put<std::uint64_t>(0);
    const std::size_t begin = c.size();
    std::uint64_t n = f.count;
    if (f.pack)
      n = f.pack(c);
    else
      c.append(f.packed.data(), f.packed.size());
    const std::uint64_t bytes = c.size() - begin;
    std::memcpy(c.data() + at, &n, sizeof n);
    std::memcpy(c.data() + at + sizeof n, &bytes, sizeof bytes);
  }
  dispatch(c);
}

void Shell::setAllPacked(ObjId obj, std::string_view field, const std::type_info& type,
                         const ByteBuffer& value) {
  ByteBuffer c = command(Op::setAll);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  c.append(value.data(), value.size());
  dispatch(c);
}

ByteBuffer Shell::lookupGetPacked(ObjId obj, std::string_view field, const std::type_info& keyType,
                                  const ByteBuffer& key, const std::type_info& type) {
  ByteBuffer c = command(Op::lookupGet);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, keyType);
  put_type(w, type);
  w.put<std::string>(std::string(key.data(), key.size()));
  auto rep = dispatch(c);
  const Element* e = sim_.elements().get(obj.id);
  return std::move(rep[static_cast<std::size_t>(e ? e->owner(obj.dataIndex) : 0)]);
}

void Shell::lookupSetPacked(ObjId obj, std::string_view field, const std::type_info& keyType,
                            const ByteBuffer& key, const std::type_info& type,
                            const ByteBuffer& value) {
  ByteBuffer c = command(Op::lookupSet);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, keyType);
  put_type(w, type);
  w.put<std::string>(std::string(key.data(), key.size()));
  c.append(value.data(), value.size());
  dispatch(c);
}

void Shell::callPacked(ObjId obj, std::string_view dest,
                       const std::vector<const std::type_info*>& types, const ByteBuffer& args) {
  ByteBuffer c = command(Op::call);
  Writer w(c);
  w.put<ObjId>(obj)
      .put<std::string>(std::string(dest))
      .put<std::uint32_t>(static_cast<std::uint32_t>(types.size()));
  for (auto* t : types) put_type(w, *t);
  c.append(args.data(), args.size());
  dispatch(c);
}

}  // namespace antler
