#pragma once

/// Catches each of `signals` (`count` of them) with a handler that writes the signal's number, one
/// byte, to a pipe, and returns the pipe's read end (-1 on failure). Unlike ignoring the signals and
/// waiting for a dispatch source to be registered, this leaves no moment in which a signal is lost:
/// before the call the default action applies, after it every signal lands in the pipe. The write
/// end is non-blocking, so a handler never waits on a full pipe (extra signals are then dropped).
/// Call once per process.
int kw_signal_pipe(const int *signals, int count);
