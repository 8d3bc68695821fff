#pragma once
/// Symbol visibility. libantler and libantler_recorders build with -fvisibility=hidden: only what
/// the public headers declare is exported. Each public header wraps its declarations in
/// `#pragma GCC visibility push(default)` / `pop`; implementation headers (the detail/ folders,
/// not installed) do not, so the Shell's handlers, the command table, the path walker's insides
/// and everything in a .cpp file stay inside the library. A declaration in a detail header that
/// a test of the library reaches is marked ANTLER_API.
#define ANTLER_API __attribute__((visibility("default")))
