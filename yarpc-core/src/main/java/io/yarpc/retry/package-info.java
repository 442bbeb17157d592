/**
 * Retries: {@link io.yarpc.retry.RetryMiddleware} sends a failed unary call again when that is safe, with
 * {@link io.yarpc.retry.Backoff} between attempts and a {@link io.yarpc.retry.RetryBudget} that bounds
 * the extra load; {@link io.yarpc.retry.Backoff} is also the transports' reconnect backoff.
 */
package io.yarpc.retry;
