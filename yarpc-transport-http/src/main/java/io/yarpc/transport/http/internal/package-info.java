/** Implementation of the HTTP transport; not a public API, may change without notice. */
@Internal
package io.yarpc.transport.http.internal;

import io.yarpc.Internal;
