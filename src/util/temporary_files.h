// The temporary files this process is writing (AtomicFileWriter's), for a signal handler to
// remove: a compile interrupted with Ctrl-C or killed with SIGTERM leaves no half-written file.
// Paths sit in a fixed table of fixed-size slots, so the handler reads them without locks or
// allocation.
#pragma once

#include <string>

namespace epctx {

// Records `path`; returns its slot, or -1 when the table is full or the path too long (the file
// is then only removed by its writer, or by the next write into its folder).
int RegisterTemporary(const std::string& path);
// Forgets slot `slot` (-1: nothing).
void UnregisterTemporary(int slot);
// Unlinks every recorded path. Async-signal-safe.
void RemoveRegisteredTemporaries();

// SIGINT, SIGTERM and SIGHUP remove the recorded temporaries, then end the process as the
// signal would have (for command-line tools: a library does not take over signals).
void RemoveTemporariesOnTerminationSignals();

}  // namespace epctx
