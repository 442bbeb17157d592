package io.yarpc.errors;

/**
 * Who is to blame for a failed call: the caller (bad input, missing permission...) or the server (bugs,
 * overload, timeouts). Drives metrics (caller_failures vs server_failures) and log levels.
 */
public enum FaultType {
  /** The caller sent something the server could not or would not serve. */
  CLIENT,
  /** The server failed to serve a request it should have served. */
  SERVER
}
