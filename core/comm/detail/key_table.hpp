#pragma once
// KeyTable: the table comm::Reductions keeps its reductions and early messages in (internal).
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace antler::comm::detail {

/// A reduction's key: its matching scope (0 for explicit ids, else the member list's hash) and
/// its id or call number.
struct Key {
  std::uint64_t scope = 0, id = 0;
  bool operator==(const Key&) const = default;
};

/// A table from Key to V: open addressing with linear probing and backward-shift deletion, so
/// that entries live in one array and inserting or erasing allocates nothing until it grows
/// (a reduction makes and erases an entry, and a message that comes early another).
template <class V>
class KeyTable {
 public:
  KeyTable() : slots_(16) {}
  /// Slots (a power of two, at least twice the entries).
  std::size_t capacity() const { return slots_.size(); }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const V* find(const Key& k) const {
    if (n_ == 0) return nullptr;
    for (std::size_t i = home(k);; i = (i + 1) & mask()) {
      const Slot& x = slots_[i];
      if (!x.used) return nullptr;
      if (x.key == k) return &x.value;
    }
  }
  V* find(const Key& k) { return const_cast<V*>(std::as_const(*this).find(k)); }
  /// The entry for k, made (with V{}) if absent.
  V& operator[](const Key& k) {
    if (V* v = find(k)) return *v;
    if (2 * (n_ + 1) > slots_.size()) grow();
    return place(k, V{});
  }
  void erase(const Key& k) {
    std::size_t i = home(k);
    for (;; i = (i + 1) & mask()) {
      if (!slots_[i].used) return;
      if (slots_[i].key == k) break;
    }
    // Backward shift: later entries of the run move up into the hole where their probe allows.
    for (std::size_t j = (i + 1) & mask();; j = (j + 1) & mask()) {
      Slot& y = slots_[j];
      if (!y.used) break;
      const std::size_t h = home(y.key);
      if (((j - h) & mask()) >= ((j - i) & mask())) {
        slots_[i].key = y.key;
        slots_[i].value = std::move(y.value);
        i = j;
      }
    }
    slots_[i].used = false;
    slots_[i].value = V{};
    --n_;
  }
  template <class F>
  void forEach(F f) {
    for (Slot& x : slots_)
      if (x.used) f(x.key, x.value);
  }

 private:
  struct Slot {
    Key key{};
    bool used = false;
    V value{};
  };
  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t home(const Key& k) const {
    std::uint64_t x = k.scope * 0x9E3779B97F4A7C15ull ^ k.id;  // ids step by 4: mix them
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return static_cast<std::size_t>(x) & mask();
  }
  V& place(const Key& k, V&& v) {
    std::size_t i = home(k);
    while (slots_[i].used) i = (i + 1) & mask();
    slots_[i].key = k;
    slots_[i].used = true;
    slots_[i].value = std::move(v);
    ++n_;
    return slots_[i].value;
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    n_ = 0;
    for (Slot& x : old)
      if (x.used) place(x.key, std::move(x.value));
  }
  std::vector<Slot> slots_;
  std::size_t n_ = 0;
};

}  // namespace antler::comm::detail
