#pragma once
/// The reduction behind Shell::doSyncDataHandler: ReduceFieldDimension over the entry counts of a
/// FieldElement's parents, whose digest sets fieldDimension on every node.
#include "core/element.hpp"

namespace antler {

/// Runs the reduction now on this node (every node must call it in the same order: it makes one
/// collective when there are several nodes). Returns the new fieldDimension.
Index sync_data_handler(FieldElement* fe, unsigned numThreads);

}  // namespace antler
