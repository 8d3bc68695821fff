#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Forward declarations of core/.
#include <cstdint>

namespace antler {
using Index = std::uint32_t;  ///< a data or field index
class Element;
class DataElement;
class FieldElement;
class Cinfo;
class Finfo;
class ValueFinfoBase;
class LookupValueFinfoBase;
class DestFinfoBase;
class SrcFinfoBase;
class ProcFinfoBase;
class FieldElementFinfoBase;
class SweepSink;
struct Id;
struct ObjId;
class Eref;
struct ProcInfo;
struct Target;
class Writer;
class Reader;
class ByteBuffer;
}  // namespace antler
#pragma GCC visibility pop
