#include "core/neutral.hpp"

#include "core/class_builder.hpp"
#include "core/context.hpp"

namespace antler {

namespace {
// Neutral is the root of the class tree, so it is built without ClassBuilder's default base.
const Cinfo* makeNeutral() {
  return ClassBuilder<Neutral>("Neutral", "base class of every class; a plain container", nullptr)
      .readOnlyFn<std::string>(
          "name", [](const Eref& e, const Neutral&) { return e.element()->name(); },
          "name of the element")
      .readOnlyFn<std::string>(
          "path",
          [](const Eref& e, const Neutral&) {
            return e.element()->context().elements().path(e.objId());
          },
          "full path of the object")
      .readOnlyFn<std::string>(
          "className", [](const Eref& e, const Neutral&) { return e.element()->cinfo()->name(); },
          "class of the element")
      .readOnlyFn<unsigned>(
          "numData", [](const Eref& e, const Neutral&) { return e.element()->numData(); },
          "number of data entries over all nodes")
      .readOnlyFn<unsigned>(
          "numField",
          [](const Eref& e, const Neutral&) { return e.element()->numField(e.dataIndex()); },
          "number of field entries of this data entry (1 unless a field element)")
      .readOnlyFn<ObjId>(
          "parent", [](const Eref& e, const Neutral&) { return ObjId(e.element()->parent()); },
          "parent element")
      .readOnlyFn<std::vector<ObjId>>(
          "children",
          [](const Eref& e, const Neutral&) {
            std::vector<ObjId> out;
            for (Id c : e.element()->children()) out.emplace_back(c);
            return out;
          },
          "child elements")
      .build();
}
}  // namespace

const Cinfo* Neutral::initCinfo() {
  static const Cinfo* c = makeNeutral();
  return c;
}

namespace {
const Cinfo* registered = Neutral::initCinfo();
}

}  // namespace antler
