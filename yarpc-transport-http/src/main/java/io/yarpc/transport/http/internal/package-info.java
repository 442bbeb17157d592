/** Implementation of the HTTP transport; not a public API, may change without notice. */
package io.yarpc.transport.http.internal;
