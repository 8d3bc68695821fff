// A library that would register a class name twice, for the loadLibrary tests: TestDupFresh is
// new, IntFire clashes with antler's own IntFire, TestDupAfter comes after the clash. Loading
// it must be refused with nothing of it registered.
#include "core/class_builder.hpp"

namespace antler::test::dup {

struct Fresh {
  double a_ = 0;
};
struct FakeIntFire {
  double Vm_ = 0;
};
struct After {
  double b_ = 0;
};

namespace {
[[maybe_unused]] const Cinfo* reg[] = {
    ClassBuilder<Fresh>("TestDupFresh", "registered before the clash")
        .value("a", &Fresh::a_)
        .build(),
    ClassBuilder<FakeIntFire>("IntFire", "clashes with antler's IntFire")
        .value("Vm", &FakeIntFire::Vm_)
        .build(),
    ClassBuilder<After>("TestDupAfter", "registered after the clash")
        .value("b", &After::b_)
        .build()};
}  // namespace

}  // namespace antler::test::dup
