/**
 * Example: inbound and outbound middleware — logging and a header-based auth check ({@link
 * io.yarpc.examples.middleware.MiddlewareExample}).
 */
package io.yarpc.examples.middleware;
