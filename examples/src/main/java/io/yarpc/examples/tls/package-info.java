/** Mutual TLS, and authorization middleware that reads the caller's verified certificate. */
package io.yarpc.examples.tls;
