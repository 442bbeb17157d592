/** Implementation of the admin listener; not a public API, may change without notice. */
@Internal
package io.yarpc.observability.admin.internal;

import io.yarpc.Internal;
